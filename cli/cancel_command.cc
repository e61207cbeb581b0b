// `softwire cancel ID --to ADDR`: stops a queued or running job of a server; returns once its
// actors have stopped and its devices are free.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/flag_parser.h"
#include "cli/server_connection.h"

namespace softwire {
namespace cli {
namespace {

struct CancelFlags {
  ServerFlags server;
  std::string reason;
  bool help = false;
};

FlagParser MakeParser(CancelFlags* flags) {
  FlagParser parser;
  AddServerFlags(&parser, &flags->server);
  parser.AddString("reason", &flags->reason, "TEXT",
                   "say why in the job's cancelled event (default: cancelled by a client)");
  parser.AddBool("help", &flags->help, "show this help");
  return parser;
}

}  // namespace

std::string CancelHelp() {
  CancelFlags flags;
  return "usage: softwire cancel ID [flags]\n"
         "\n"
         "Cancels job ID of a server: a queued job never runs, a running one stops, and its\n"
         "devices and memory are free when this returns. A job that already ended stays as it\n"
         "is; the line printed says its state.\n"
         "\n"
         "flags:\n" +
         MakeParser(&flags).Help() +
         "\n"
         "exit codes: 0 the job is cancelled or had ended; 2 bad flags or an unknown job; 1 the\n"
         "server could not be reached.\n";
}

int CancelCommand(const std::vector<std::string>& args) {
  CancelFlags flags;
  const FlagParser parser = MakeParser(&flags);
  const CommandLineSpec spec{"cancel", "ID",        "job id",   "job-3",
                             &parser,  &flags.help, CancelHelp, nullptr};
  std::string job_id;
  if (std::optional<int> exit = ReadCommandLine(spec, args, &job_id)) return *exit;
  StatusOr<service::JobClientOptions> options = ClientOptionsFor(flags.server);
  if (!options.ok()) {
    std::fprintf(stderr, "softwire cancel: %s\n", options.status().message().c_str());
    return kExitBadInput;
  }
  service::JobClient client(*options);
  StatusOr<proto::JobInfo> job = client.Cancel(job_id, flags.reason);
  if (!job.ok()) {
    std::fprintf(stderr, "softwire cancel: %s\n", job.status().message().c_str());
    return ExitCodeFor(job.status());
  }
  std::string state = proto::JobState_Name(job->state());
  if (state.rfind("JOB_STATE_", 0) == 0) state = state.substr(10);
  std::printf("%s: %s\n", job->job_id().c_str(), state.c_str());
  return kExitSuccess;
}

}  // namespace cli
}  // namespace softwire
