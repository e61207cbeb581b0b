#include "cli/command_line.h"

#include <cstdio>

#include "cli/commands.h"

namespace softwire {
namespace cli {

std::optional<int> ReadCommandLine(const CommandLineSpec& spec,
                                   const std::vector<std::string>& args, std::string* operand) {
  std::vector<std::string> positional;
  Status status = spec.parser->Parse(args, &positional);
  if (spec.help != nullptr && *spec.help) {
    std::fputs(spec.help_text().c_str(), stdout);
    return kExitSuccess;
  }
  if (status.ok() && spec.check_flags) status = spec.check_flags();
  if (status.ok() && positional.size() != 1) {
    const std::string example =
        *spec.example == '\0' ? "" : std::string(" (e.g. ") + spec.example + ")";
    status =
        InvalidArgumentError((positional.empty() ? std::string("no ") + spec.noun + " given"
                                                 : std::string("give exactly one ") + spec.noun) +
                             example);
  }
  if (!status.ok()) {
    std::fprintf(stderr, "softwire %s: %s\nusage: softwire %s %s [flags]; see softwire help %s\n",
                 spec.command, status.message().c_str(), spec.command, spec.operand, spec.command);
    return kExitBadInput;
  }
  *operand = positional[0];
  return std::nullopt;
}

}  // namespace cli
}  // namespace softwire
