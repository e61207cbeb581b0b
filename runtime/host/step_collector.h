// StepCollector: turns the per-piece values sink kernels report into per-step values.
//
// A step's value of an output is the mean over the step's pieces (docs/PROTOCOL.md); when
// several sinks observe one output name (one per data-parallel replica, say), the mean over
// all of their values. A step is complete once every output has all of its values; the waiting
// thread takes completed steps in order with TakeCompletedSteps and hands them to the progress
// listener, so user code never runs on an actor's thread.
//
// Threading: Report is called by sink kernels on any thread; the rest by the waiting thread.
#ifndef SOFTWIRE_RUNTIME_HOST_STEP_COLLECTOR_H_
#define SOFTWIRE_RUNTIME_HOST_STEP_COLLECTOR_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "proto/plan.pb.h"
#include "runtime/host/job_monitor.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

// One step's values, as the collector completed them.
struct CollectedStep {
  int64_t step = 0;
  std::chrono::steady_clock::time_point completed_at;
  std::map<std::string, double> outputs;  // Output name -> mean over the step's pieces.
};

class StepCollector final : public OutputReporter {
 public:
  // `monitor` is borrowed; it hears about completed steps when `notify_steps`, and about
  // reports that break the plan (an unknown output, a piece out of range or reported too often).
  StepCollector(const proto::Plan& plan, JobMonitor* monitor, bool notify_steps);

  void Report(const std::string& output, int64_t piece, double value) override;

  // Completed steps not taken before, in step order, stopping at the first incomplete one.
  std::vector<CollectedStep> TakeCompletedSteps();

  bool has_outputs() const EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    return !outputs_.empty();
  }

 private:
  struct Output {
    std::string name;
    int64_t sinks = 0;              // Sink actors observing it: values per piece.
    std::vector<double> sum;        // Per step.
    std::vector<int64_t> count;     // Per step.
    std::vector<int64_t> reported;  // Per piece.
  };

  const int64_t pieces_per_step_;
  const int64_t total_pieces_;
  JobMonitor* const monitor_;
  const bool notify_steps_;
  std::unordered_map<std::string, int> output_index_;  // Read-only after construction.

  mutable Mutex mutex_;
  std::vector<Output> outputs_ GUARDED_BY(mutex_);
  std::vector<int> complete_outputs_ GUARDED_BY(mutex_);                                // Per step.
  std::vector<std::chrono::steady_clock::time_point> completed_at_ GUARDED_BY(mutex_);  // Per step.
  int64_t next_step_ GUARDED_BY(mutex_) = 0;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_STEP_COLLECTOR_H_
