#include "cli/testing/softwire_process.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

#include "proto/testing/classifier_job_text.h"

namespace softwire {
namespace cli_testing {

Outcome RunSoftwire(const std::string& binary, const std::string& args) {
  const std::string command = "timeout 60 " + binary + " " + args + " 2>&1";
  Outcome outcome;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  size_t read = 0;
  while ((read = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    outcome.output.append(buffer, read);
  }
  const int status = pclose(pipe);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  return outcome;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

double TestTimeScale() {
  const char* text = std::getenv("SOFTWIRE_TEST_TIME_SCALE");
  if (text == nullptr) return 1;
  char* end = nullptr;
  const double scale = std::strtod(text, &end);
  return end != text && *end == '\0' && scale >= 1 ? scale : 1;
}

const std::string kTinyJob = proto_testing::ClassifierJobText({});

}  // namespace cli_testing
}  // namespace softwire
