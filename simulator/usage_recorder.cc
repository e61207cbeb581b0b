#include "simulator/usage_recorder.h"

namespace softwire {
namespace simulator {

SimTime CoveredTime(const std::vector<Interval>& intervals, SimTime begin, SimTime end) {
  if (end <= begin) return 0;
  auto first = std::upper_bound(intervals.begin(), intervals.end(), begin,
                                [](SimTime time, const Interval& i) { return time < i.end; });
  SimTime covered = 0;
  for (auto it = first; it != intervals.end() && it->start < end; ++it) {
    covered += std::min(it->end, end) - std::max(it->start, begin);
  }
  return covered;
}

std::vector<Interval> MergeIntervals(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> merged;
  for (const Interval& interval : intervals) {
    if (!merged.empty() && interval.start <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, interval.end);
    } else {
      merged.push_back(interval);
    }
  }
  return merged;
}

UsageRecorder::UsageRecorder(const SimulationLayout* layout, int64_t steps, int64_t pieces_per_step,
                             int devices, bool record_intervals)
    : layout_(layout),
      pieces_per_step_(std::max<int64_t>(1, pieces_per_step)),
      devices_(std::max(1, devices)),
      record_intervals_(record_intervals),
      queues_(layout->queues.size()),
      steps_(static_cast<size_t>(std::max<int64_t>(1, steps))),
      step_devices_(steps_.size() * static_cast<size_t>(devices_), 0),
      device_pipeline_(static_cast<size_t>(devices_)) {}

void UsageRecorder::Finish(SimTime total, SimulationResult* result) const {
  result->total_ns = total;
  FinishSteps(result);
  FinishQueues(total, result);
  FinishBubble(result);
}

void UsageRecorder::FinishSteps(SimulationResult* result) const {
  const size_t steps = steps_.size();
  result->step_end_ns.clear();
  result->step_ns.clear();
  SimTime previous = 0;
  for (const StepState& step : steps_) {
    result->step_end_ns.push_back(step.end);
    result->step_ns.push_back(step.end - previous);
    previous = step.end;
  }
  result->first_steady_step = steps >= 2 ? 1 : 0;
  result->steady_step_ns =
      steps >= 2 ? (steps_.back().end - steps_.front().end) / static_cast<SimTime>(steps - 1)
                 : steps_.front().end;
  SimTime begin = std::numeric_limits<SimTime>::max();
  SimTime end = std::numeric_limits<SimTime>::min();
  for (size_t s = static_cast<size_t>(result->first_steady_step); s < steps; ++s) {
    begin = std::min(begin, steps_[s].pipeline_start);
    end = std::max(end, steps_[s].pipeline_end);
  }
  result->steady_begin_ns = end > begin ? begin : 0;
  result->steady_end_ns = end > begin ? end : 0;
}

void UsageRecorder::FinishQueues(SimTime total, SimulationResult* result) const {
  result->queues.clear();
  const SimTime window = result->steady_end_ns - result->steady_begin_ns;
  for (size_t q = 0; q < queues_.size(); ++q) {
    const QueueState& state = queues_[q];
    QueueUsage usage;
    usage.device = layout_->queues[q].device;
    usage.queue = layout_->queues[q].queue;
    usage.firings = state.firings;
    usage.busy_ns = state.busy;
    usage.utilization = total > 0 ? static_cast<double>(state.busy) / total : 0;
    if (record_intervals_ && window > 0) {
      usage.steady_utilization =
          static_cast<double>(
              CoveredTime(state.intervals, result->steady_begin_ns, result->steady_end_ns)) /
          window;
    }
    result->queues.push_back(usage);
  }
}

void UsageRecorder::FinishBubble(SimulationResult* result) const {
  const double p = result->stages;
  const double m = static_cast<double>(pieces_per_step_);
  result->bubble_formula = (p - 1) / (m + p - 1);
  result->bubble_measured = -1;
  if (!record_intervals_) return;
  // A device's pipeline firings may run on several queues: merge them into one busy line.
  std::vector<std::vector<Interval>> busy(device_pipeline_.size());
  for (size_t d = 0; d < device_pipeline_.size(); ++d) {
    const std::vector<Interval>& intervals = device_pipeline_[d];
    bool sorted_disjoint = true;
    for (size_t i = 1; i < intervals.size() && sorted_disjoint; ++i) {
      sorted_disjoint = intervals[i - 1].end <= intervals[i].start;
    }
    busy[d] = sorted_disjoint ? intervals : MergeIntervals(intervals);
  }
  double idle = 0;
  double total = 0;
  for (size_t s = static_cast<size_t>(result->first_steady_step); s < steps_.size(); ++s) {
    const StepState& step = steps_[s];
    if (step.pipeline_end <= step.pipeline_start) continue;
    const SimTime length = step.pipeline_end - step.pipeline_start;
    for (size_t d = 0; d < busy.size(); ++d) {
      if (!step_devices_[s * static_cast<size_t>(devices_) + d]) continue;
      idle += static_cast<double>(length -
                                  CoveredTime(busy[d], step.pipeline_start, step.pipeline_end));
      total += static_cast<double>(length);
    }
  }
  if (total > 0) result->bubble_measured = idle / total;
}

}  // namespace simulator
}  // namespace softwire
