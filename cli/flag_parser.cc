#include "cli/flag_parser.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace softwire {
namespace cli {
namespace {

Status BadValue(const std::string& name, const std::string& value, const std::string& expected) {
  return InvalidArgumentError("--" + name + ": '" + value + "' is not " + expected);
}

}  // namespace

void FlagParser::AddInt(const std::string& name, int64_t* target, const std::string& value_name,
                        const std::string& help) {
  flags_.push_back({name, value_name, help, [name, target](const std::string& value) {
                      errno = 0;
                      char* end = nullptr;
                      long long parsed = std::strtoll(value.c_str(), &end, 10);
                      if (value.empty() || *end != '\0' || errno == ERANGE) {
                        return BadValue(name, value, "an integer");
                      }
                      *target = parsed;
                      return Status::Ok();
                    }});
}

void FlagParser::AddDouble(const std::string& name, double* target, const std::string& value_name,
                           const std::string& help) {
  flags_.push_back({name, value_name, help, [name, target](const std::string& value) {
                      errno = 0;
                      char* end = nullptr;
                      double parsed = std::strtod(value.c_str(), &end);
                      if (value.empty() || *end != '\0' || errno == ERANGE ||
                          !std::isfinite(parsed)) {
                        return BadValue(name, value, "a number");
                      }
                      *target = parsed;
                      return Status::Ok();
                    }});
}

void FlagParser::AddString(const std::string& name, std::string* target,
                           const std::string& value_name, const std::string& help) {
  flags_.push_back({name, value_name, help, [name, target](const std::string& value) {
                      if (value.empty()) {
                        return InvalidArgumentError("--" + name + " needs a non-empty value");
                      }
                      *target = value;
                      return Status::Ok();
                    }});
}

void FlagParser::AddBool(const std::string& name, bool* target, const std::string& help) {
  flags_.push_back({name, "", help, [name, target](const std::string& value) {
                      if (value == "true" || value == "1") {
                        *target = true;
                      } else if (value == "false" || value == "0") {
                        *target = false;
                      } else {
                        return BadValue(name, value, "true or false");
                      }
                      return Status::Ok();
                    }});
}

const FlagParser::Flag* FlagParser::Find(const std::string& name) const {
  for (const Flag& flag : flags_) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

Status FlagParser::Parse(const std::vector<std::string>& args,
                         std::vector<std::string>* positional) const {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      positional->insert(positional->end(), args.begin() + i + 1, args.end());
      return Status::Ok();
    }
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      positional->push_back(arg);
      continue;
    }
    if (arg.compare(0, 2, "--") != 0) {
      return InvalidArgumentError("unknown flag '" + arg + "' (flags are spelled --name)");
    }
    size_t equals = arg.find('=');
    std::string name = arg.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
    const Flag* flag = Find(name);
    if (flag == nullptr) return InvalidArgumentError("unknown flag --" + name);
    std::string value;
    if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else if (flag->value_name.empty()) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return InvalidArgumentError("--" + name + " needs a value (" + flag->value_name + ")");
    }
    SOFTWIRE_RETURN_IF_ERROR(flag->set(value));
  }
  return Status::Ok();
}

std::string FlagParser::Help() const {
  size_t width = 0;
  std::vector<std::string> left;
  for (const Flag& flag : flags_) {
    left.push_back("--" + flag.name + (flag.value_name.empty() ? "" : " " + flag.value_name));
    width = std::max(width, left.back().size());
  }
  std::string text;
  for (size_t i = 0; i < flags_.size(); ++i) {
    text += "  " + left[i] + std::string(width - left[i].size() + 3, ' ') + flags_[i].help + "\n";
  }
  return text;
}

}  // namespace cli
}  // namespace softwire
