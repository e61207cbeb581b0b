// FlagParser: the command line of one `softwire` subcommand, with no dependency beyond the
// standard library.
//
//   int64_t steps = 0;
//   bool quiet = false;
//   FlagParser flags;
//   flags.AddInt("steps", &steps, "N", "run N steps instead of the job's");
//   flags.AddBool("quiet", &quiet, "print nothing but errors");
//   std::vector<std::string> positional;
//   Status status = flags.Parse(args, &positional);  // InvalidArgument names the flag.
//
// Accepted forms: `--name value`, `--name=value`, and for booleans a bare `--name` (or
// `--name=true|false`). `--` ends the flags; everything after it is positional. A flag given
// twice takes its last value.
//
// Why not CLI11 (Debian's libcli11-dev 2.1.2, tried on these flags): it accepts
// `--steps=99999999999999999999` as INT64_MAX and `--timeout nan`, reads `--out=` as a missing
// value, and words errors as "Could not convert: --steps = three" and "The following argument
// was not expected: --stpes" with exit codes of its own. Matching this parser would take a
// validator and a message translation per flag type, more code than the conversions below, for
// a header that alone takes 5 s and 330 MB to compile on the 2-core build machine.
#ifndef SOFTWIRE_CLI_FLAG_PARSER_H_
#define SOFTWIRE_CLI_FLAG_PARSER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace softwire {
namespace cli {

class FlagParser {
 public:
  // Targets are borrowed; they keep their values unless the flag is given.
  void AddInt(const std::string& name, int64_t* target, const std::string& value_name,
              const std::string& help);
  void AddDouble(const std::string& name, double* target, const std::string& value_name,
                 const std::string& help);
  void AddString(const std::string& name, std::string* target, const std::string& value_name,
                 const std::string& help);
  void AddBool(const std::string& name, bool* target, const std::string& help);

  // Fills the targets from `args` and returns the arguments that are not flags, in order.
  Status Parse(const std::vector<std::string>& args, std::vector<std::string>* positional) const;

  // One line per flag: "  --steps N      run N steps instead of the job's".
  std::string Help() const;

 private:
  struct Flag {
    std::string name;
    std::string value_name;  // Empty for booleans.
    std::string help;
    std::function<Status(const std::string& value)> set;
  };
  const Flag* Find(const std::string& name) const;

  std::vector<Flag> flags_;
};

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_FLAG_PARSER_H_
