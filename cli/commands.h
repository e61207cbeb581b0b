// The subcommands of `softwire`. Each takes the arguments after its name, prints its own
// output and errors, and returns the process exit code.
#ifndef SOFTWIRE_CLI_COMMANDS_H_
#define SOFTWIRE_CLI_COMMANDS_H_

#include <string>
#include <vector>

#include "base/status.h"

namespace softwire {
namespace cli {

// Exit codes of every subcommand.
enum ExitCode : int {
  kExitSuccess = 0,
  kExitRunFailed = 1,  // The job was fine but running it failed (the failing actor is named).
  kExitBadInput = 2,   // A malformed job, a bad flag, an unwritable output path.
};

// Bad input (exit 2) or a failure of the run itself (exit 1), by status code.
ExitCode ExitCodeFor(const Status& status);

// `softwire run JOB.pbtxt [--steps N] [--metrics-out FILE] [--save DIR] [--quiet] ...`
int RunCommand(const std::vector<std::string>& args);
std::string RunHelp();

// `softwire compile JOB.pbtxt [--dump] [--steps N]`
int CompileCommand(const std::vector<std::string>& args);
std::string CompileHelp();

// `softwire trace summary FILE | render FILE -o OUT.svg|OUT.html | check FILE`
int TraceCommand(const std::vector<std::string>& args);
std::string TraceHelp();

// `softwire diagnose ADDR [--job ID] [--timeout S] [--clock N]`: a running job's wait states
// over gRPC.
int DiagnoseCommand(const std::vector<std::string>& args);
std::string DiagnoseHelp();

// `softwire serve [--listen ADDR] [--cluster SPEC] [--state-dir DIR] [--data-root DIR] ...`:
// the job service until SIGINT or SIGTERM (service/rpc/job_server.h).
int ServeCommand(const std::vector<std::string>& args);
std::string ServeHelp();

// `softwire node --join ADDR [--name NAME] [--devices SPEC] ...`: a node agent that hosts its
// devices for the server's jobs until SIGINT or SIGTERM (service/node_agent.h).
int NodeCommand(const std::vector<std::string>& args);
std::string NodeHelp();

// `softwire submit JOB.pbtxt [--to ADDR] [--detach] [--metrics-out FILE] ...`: a job to a server,
// followed to its end.
int SubmitCommand(const std::vector<std::string>& args);
std::string SubmitHelp();

// `softwire jobs [--to ADDR] [--devices | --nodes]`: a server's jobs (or devices, or nodes).
int JobsCommand(const std::vector<std::string>& args);
std::string JobsHelp();

// `softwire watch ID [--to ADDR]`: a served job's events, followed to its end.
int WatchCommand(const std::vector<std::string>& args);
std::string WatchHelp();

// `softwire cancel ID [--to ADDR]`: stops a served job.
int CancelCommand(const std::vector<std::string>& args);
std::string CancelHelp();

// `softwire fetch ID [--to ADDR] [--save DIR] [--trace FILE] [--metrics-out FILE]`: what a
// served job made.
int FetchCommand(const std::vector<std::string>& args);
std::string FetchHelp();

// `softwire simulate JOB.pbtxt [--cluster SPEC] [--dp N --tp N --pp N --micro-batches M]
// [--steps N] [--trace FILE]`: the plan in virtual time (simulator/).
int SimulateCommand(const std::vector<std::string>& args);
std::string SimulateHelp();

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_COMMANDS_H_
