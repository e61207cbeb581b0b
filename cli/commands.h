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

// `softwire diagnose ADDR [--timeout S] [--clock N]`: a running job's wait states over gRPC.
int DiagnoseCommand(const std::vector<std::string>& args);
std::string DiagnoseHelp();

// `softwire simulate JOB.pbtxt [--cluster SPEC] [--dp N --tp N --pp N --micro-batches M]
// [--steps N] [--trace FILE]`: the plan in virtual time (simulator/).
int SimulateCommand(const std::vector<std::string>& args);
std::string SimulateHelp();

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_COMMANDS_H_
