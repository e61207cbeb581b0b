// Steps as users see them: what one completed step reports (its outputs, wall time and
// throughput), made from the step collector's CollectedSteps, and the JSON line `softwire run
// --metrics-out` and a served job's metrics.jsonl write for it. RunPlan's progress listener, the
// CLI and the job service (service/) all go through here, so they print the same numbers.
//
//   StepTimer timer(plan);
//   StepResult step = timer.Time(collected, started_at);   // once per step, in order
//   out << MetricsJsonLine(step) << "\n";
//
// Threading: a StepTimer belongs to the thread that takes the run's steps (JobEvents::OnStep).
#ifndef SOFTWIRE_RUNTIME_HOST_STEP_RESULTS_H_
#define SOFTWIRE_RUNTIME_HOST_STEP_RESULTS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "proto/plan.pb.h"
#include "runtime/host/step_collector.h"

namespace softwire {
namespace runtime {

// One completed step.
struct StepResult {
  int64_t step = 0;
  // Mean of the loss output over the step's pieces; NaN when the plan has no loss.
  double loss = 0;
  // Every output (the loss included) by name: the mean over the step's pieces.
  std::map<std::string, double> outputs;
  // Wall seconds since the previous step completed (the first: since the actors started).
  double seconds = 0;
  // Samples (pieces_per_step * micro_batch_size) per wall second of this step.
  double samples_per_second = 0;
};

// Turns one run's collected steps into StepResults: the loss picked out of the outputs, wall
// time per step and throughput.
class StepTimer {
 public:
  explicit StepTimer(const proto::Plan& plan);

  // Step `step` of the run whose actors started at `started_at`; call in step order.
  StepResult Time(const CollectedStep& step, std::chrono::steady_clock::time_point started_at);

  // The loss output's name; empty for a plan without a loss.
  const std::string& loss_name() const { return loss_name_; }
  // Samples per step: pieces per step times the micro-batch size.
  double samples_per_step() const { return samples_per_step_; }

 private:
  const double samples_per_step_;
  std::string loss_name_;
  int64_t timed_ = 0;
  std::chrono::steady_clock::time_point previous_;
};

// One JSON object, no newline:
//   {"step":0,"loss":2.30,"samples_per_second":1234.5,"seconds":0.01,"accuracy":0.12}
// `step` counts from 0 like the plan's steps; every output of the step follows the four fixed
// keys. An output named like a fixed key is written as "output:<name>", except the loss
// output named "loss", which is the "loss" key. Numbers that JSON cannot hold (NaN,
// infinities) are written as null.
std::string MetricsJsonLine(const StepResult& step);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_STEP_RESULTS_H_
