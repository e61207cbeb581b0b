#include "cli/testing/softwire_process.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>

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

const char kTinyJob[] = R"(name: "tiny"
source {
  name: "data"
  output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 4 }
  output { name: "labels" dtype: DATA_TYPE_INT32 }
  synthetic { seed: 7 int_high: 3 }
}
variable {
  name: "w"
  dtype: DATA_TYPE_FLOAT32
  dims: [4, 3]
  initializer { normal { stddev: 0.1 seed: 1 } }
}
op { name: "fc" type: "matmul" input: ["x", "w"] output: "logits" }
op { name: "xent" type: "softmax_cross_entropy" input: ["logits", "labels"] output: "losses" }
op { name: "mean" type: "reduce_mean" input: "losses" output: "loss" }
train {
  loss: "loss"
  optimizer { sgd { learning_rate: 0.1 } }
  steps: 4
  micro_batch_size: 8
  micro_batches_per_step: 2
}
)";

}  // namespace cli_testing
}  // namespace softwire
