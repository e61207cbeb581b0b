// softwire: compile and run dataflow jobs.
//
//   softwire run demos/digits/digits.pbtxt --steps 100 --metrics-out metrics.jsonl
//   softwire compile demos/digits/digits.pbtxt --dump
//   softwire help run
#include <glog/logging.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace softwire {
namespace cli {
namespace {

std::string Usage() {
  return "usage: softwire [--verbose] COMMAND [ARGS]\n"
         "\n"
         "commands:\n"
         "  run JOB.pbtxt       compile a job and run it in this process\n"
         "  compile JOB.pbtxt   compile a job and print its plan\n"
         "  trace summary|render|check FILE   read an actor trace (softwire run --trace FILE)\n"
         "  diagnose ADDR       ask a job run with --listen ADDR (or served, --job ID) what its\n"
         "                      actors wait for\n"
         "  simulate JOB.pbtxt  compile a job and run its plan in virtual time\n"
         "\n"
         "  serve               serve jobs over gRPC (the job service) until stopped\n"
         "  node --join ADDR    host this host's devices for a server's jobs (a node agent)\n"
         "  submit JOB.pbtxt    send a job to a server and follow it (--to ADDR)\n"
         "  jobs                list a server's jobs (--devices: its devices, --nodes: its nodes)\n"
         "  watch ID            follow a served job\n"
         "  cancel ID           cancel a served job\n"
         "  fetch ID            fetch a served job's metrics, variables and trace\n"
         "  help [COMMAND]      show this help, or a command's\n"
         "\n"
         "--verbose logs what the engine does to stderr (glog, INFO and up).\n"
         "exit codes: 0 success, 2 bad input, 1 the run failed.\n";
}

int Help(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(Usage().c_str(), stdout);
    return kExitSuccess;
  }
  if (args[0] == "run") {
    std::fputs(RunHelp().c_str(), stdout);
  } else if (args[0] == "compile") {
    std::fputs(CompileHelp().c_str(), stdout);
  } else if (args[0] == "trace") {
    std::fputs(TraceHelp().c_str(), stdout);
  } else if (args[0] == "diagnose") {
    std::fputs(DiagnoseHelp().c_str(), stdout);
  } else if (args[0] == "simulate") {
    std::fputs(SimulateHelp().c_str(), stdout);
  } else if (args[0] == "serve") {
    std::fputs(ServeHelp().c_str(), stdout);
  } else if (args[0] == "node") {
    std::fputs(NodeHelp().c_str(), stdout);
  } else if (args[0] == "submit") {
    std::fputs(SubmitHelp().c_str(), stdout);
  } else if (args[0] == "jobs") {
    std::fputs(JobsHelp().c_str(), stdout);
  } else if (args[0] == "watch") {
    std::fputs(WatchHelp().c_str(), stdout);
  } else if (args[0] == "cancel") {
    std::fputs(CancelHelp().c_str(), stdout);
  } else if (args[0] == "fetch") {
    std::fputs(FetchHelp().c_str(), stdout);
  } else if (args[0] == "help") {
    std::fputs(Usage().c_str(), stdout);
  } else {
    std::fprintf(stderr, "softwire help: unknown command '%s'\n%s", args[0].c_str(),
                 Usage().c_str());
    return kExitBadInput;
  }
  return kExitSuccess;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool verbose = false;
  while (!args.empty() && (args[0] == "--verbose" || args[0] == "-v")) {
    verbose = true;
    args.erase(args.begin());
  }
  // Logging goes to stderr, never to files; errors only unless asked.
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = verbose ? google::GLOG_INFO : google::GLOG_ERROR;
  if (args.empty()) {
    std::fputs(Usage().c_str(), stderr);
    return kExitBadInput;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (command == "run") return RunCommand(args);
  if (command == "compile") return CompileCommand(args);
  if (command == "trace") return TraceCommand(args);
  if (command == "diagnose") return DiagnoseCommand(args);
  if (command == "simulate") return SimulateCommand(args);
  if (command == "serve") return ServeCommand(args);
  if (command == "node") return NodeCommand(args);
  if (command == "submit") return SubmitCommand(args);
  if (command == "jobs") return JobsCommand(args);
  if (command == "watch") return WatchCommand(args);
  if (command == "cancel") return CancelCommand(args);
  if (command == "fetch") return FetchCommand(args);
  if (command == "help") return Help(args);
  if (command == "--help" || command == "-h") return Help({});
  std::fprintf(stderr, "softwire: unknown command '%s'\n%s", command.c_str(), Usage().c_str());
  return kExitBadInput;
}

}  // namespace
}  // namespace cli
}  // namespace softwire

int main(int argc, char** argv) {
  google::InitGoogleLogging(argv[0]);
  return softwire::cli::Main(argc, argv);
}
