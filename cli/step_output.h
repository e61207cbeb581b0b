// How `softwire run` shows steps to people: progress lines. (The JSON lines for programs are
// runtime::MetricsJsonLine, runtime/host/step_results.h, which the job service writes too.)
#ifndef SOFTWIRE_CLI_STEP_OUTPUT_H_
#define SOFTWIRE_CLI_STEP_OUTPUT_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "runtime/host/job_runner.h"

namespace softwire {
namespace cli {

// Prints a readable line for the first step, every `every`-th step and the last, with the
// throughput averaged over the steps since the previous line:
//   step   40/400  loss 0.412331  accuracy 0.906250  51234 samples/s  1.9 s
class ProgressPrinter {
 public:
  // `every` <= 0 picks about 20 lines per run (1, 2, 5, 10, 20, 50, ... steps apart).
  ProgressPrinter(std::FILE* out, int64_t total_steps, int64_t every, std::string loss_name);

  void OnStep(const runtime::StepResult& step);

  // The interval `every` <= 0 resolves to.
  static int64_t AutoInterval(int64_t total_steps);

 private:
  std::FILE* out_;
  int64_t total_steps_;
  int64_t every_;
  std::string loss_name_;
  int width_;
  double elapsed_ = 0;  // Seconds since the start.
  double seconds_since_line_ = 0;
  double samples_since_line_ = 0;
};

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_STEP_OUTPUT_H_
