// ReadCommandLine: how every `softwire` command that takes one operand (a job file, an
// address) reads its arguments: its flags, --help, its own flag checks, and exactly one
// operand. What it prints on a bad command line is the same for every command:
//
//   softwire run: --steps must be at least 1
//   usage: softwire run JOB.pbtxt [flags]; see softwire help run
//
//   RunFlags flags;
//   FlagParser parser = MakeParser(&flags);
//   std::string job_path;
//   CommandLineSpec spec{"run", "JOB.pbtxt", "job file", "", &parser, &flags.help, RunHelp,
//                        [&] { return CheckFlags(flags); }};
//   if (std::optional<int> exit = ReadCommandLine(spec, args, &job_path)) {
//     return *exit;
//   }
#ifndef SOFTWIRE_CLI_COMMAND_LINE_H_
#define SOFTWIRE_CLI_COMMAND_LINE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cli/flag_parser.h"

namespace softwire {
namespace cli {

struct CommandLineSpec {
  const char* command = "";  // "run", as typed after `softwire`.
  const char* operand = "";  // "JOB.pbtxt": the one positional argument, in the usage line.
  const char* noun = "";     // "job file": the same in words.
  const char* example = "";  // "127.0.0.1:7070", or "" for none.
  const FlagParser* parser = nullptr;
  const bool* help = nullptr;  // The parser's --help target.
  std::function<std::string()> help_text;
  // The command's own checks of its parsed flags; null for none.
  std::function<Status()> check_flags;
};

// Parses `args`. Returns the exit code the command must return now (0 after printing the help
// to stdout, kExitBadInput after printing the problem and the usage line to stderr), or nothing
// when the command goes on with `*operand` set.
std::optional<int> ReadCommandLine(const CommandLineSpec& spec,
                                   const std::vector<std::string>& args, std::string* operand);

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_COMMAND_LINE_H_
