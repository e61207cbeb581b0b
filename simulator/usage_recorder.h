// UsageRecorder: turns the firings of a simulated run into step times, queue utilization and
// the measured pipeline bubble (simulation_result.h defines each figure).
//
// The engine reports every firing as it ends (FiringEnded, on the hot path: a few additions,
// and one append to the queue's busy intervals when they are recorded); Finish computes the
// figures once at the end. A queue runs one kernel at a time, so its busy intervals arrive
// sorted and disjoint, and back-to-back kernels merge into one interval.
//
// Not thread-safe. Borrows the layout.
#ifndef SOFTWIRE_SIMULATOR_USAGE_RECORDER_H_
#define SOFTWIRE_SIMULATOR_USAGE_RECORDER_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "simulator/sim_time.h"
#include "simulator/simulation_layout.h"
#include "simulator/simulation_result.h"

namespace softwire {
namespace simulator {

// Sorted, disjoint [start, end) intervals.
struct Interval {
  SimTime start = 0;
  SimTime end = 0;
};

class UsageRecorder {
 public:
  UsageRecorder(const SimulationLayout* layout, int64_t steps, int64_t pieces_per_step, int devices,
                bool record_intervals);

  // A firing of `actor` whose first piece is `first_piece` ran over [start, end).
  void FiringEnded(int32_t actor, int64_t first_piece, SimTime start, SimTime end) {
    const SimulatedActor& facts = layout_->actors[static_cast<size_t>(actor)];
    const size_t step = static_cast<size_t>(first_piece / pieces_per_step_);
    QueueState& queue = queues_[static_cast<size_t>(facts.queue)];
    ++queue.firings;
    queue.busy += end - start;
    if (record_intervals_ && end > start) Append(&queue.intervals, start, end);
    StepState& step_state = steps_[step];
    step_state.end = std::max(step_state.end, end);
    if (!facts.pipeline) return;
    if (facts.starts_step) step_state.pipeline_start = std::min(step_state.pipeline_start, start);
    step_state.pipeline_end = std::max(step_state.pipeline_end, end);
    step_devices_[step * static_cast<size_t>(devices_) + static_cast<size_t>(facts.device)] = 1;
    if (record_intervals_ && end > start) {
      Append(&device_pipeline_[static_cast<size_t>(facts.device)], start, end);
    }
  }

  // Fills the time and usage figures of `result` for a run that ended at `total`.
  void Finish(SimTime total, SimulationResult* result) const;

 private:
  struct QueueState {
    int64_t firings = 0;
    SimTime busy = 0;
    std::vector<Interval> intervals;
  };
  struct StepState {
    SimTime end = 0;
    SimTime pipeline_start = std::numeric_limits<SimTime>::max();
    SimTime pipeline_end = std::numeric_limits<SimTime>::min();
  };

  static void Append(std::vector<Interval>* intervals, SimTime start, SimTime end) {
    if (!intervals->empty() && intervals->back().end == start) {
      intervals->back().end = end;
    } else {
      intervals->push_back(Interval{start, end});
    }
  }
  void FinishSteps(SimulationResult* result) const;
  void FinishQueues(SimTime total, SimulationResult* result) const;
  void FinishBubble(SimulationResult* result) const;

  const SimulationLayout* layout_;
  const int64_t pieces_per_step_;
  const int devices_;
  const bool record_intervals_;
  std::vector<QueueState> queues_;
  std::vector<StepState> steps_;
  std::vector<char> step_devices_;  // steps x devices: the device ran the step's pipeline.
  std::vector<std::vector<Interval>> device_pipeline_;  // Per device: pipeline firings.
};

// Time covered by `intervals` (sorted, disjoint) within [begin, end).
SimTime CoveredTime(const std::vector<Interval>& intervals, SimTime begin, SimTime end);

// Sorts by start and merges overlapping or touching intervals.
std::vector<Interval> MergeIntervals(std::vector<Interval> intervals);

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_USAGE_RECORDER_H_
