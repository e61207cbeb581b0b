// How `softwire run` shows steps: progress lines for people, JSON lines for programs.
#ifndef SOFTWIRE_CLI_STEP_OUTPUT_H_
#define SOFTWIRE_CLI_STEP_OUTPUT_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "runtime/host/job_runner.h"

namespace softwire {
namespace cli {

// One JSON object, no newline:
//   {"step":0,"loss":2.30,"samples_per_second":1234.5,"seconds":0.01,"accuracy":0.12}
// `step` counts from 0 like the plan's steps; every output of the step follows the four fixed
// keys. An output named like a fixed key is written as "output:<name>", except the loss
// output named "loss", which is the "loss" key. Numbers that JSON cannot hold (NaN,
// infinities) are written as null.
std::string MetricsJsonLine(const runtime::StepResult& step);

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
