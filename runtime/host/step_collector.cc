#include "runtime/host/step_collector.h"

namespace softwire {
namespace runtime {

StepCollector::StepCollector(const proto::Plan& plan, JobMonitor* monitor, bool notify_steps)
    : pieces_per_step_(std::max<int64_t>(1, plan.schedule().pieces_per_step())),
      total_pieces_(plan.schedule().steps() * pieces_per_step_),
      monitor_(monitor),
      notify_steps_(notify_steps) {
  int64_t steps = plan.schedule().steps();
  for (const proto::PlanOutput& plan_output : plan.output()) {
    auto found = output_index_.find(plan_output.name());
    if (found != output_index_.end()) {
      ++outputs_[found->second].sinks;
      continue;
    }
    output_index_[plan_output.name()] = static_cast<int>(outputs_.size());
    Output output;
    output.name = plan_output.name();
    output.sinks = 1;
    output.sum.assign(steps, 0.0);
    output.count.assign(steps, 0);
    output.reported.assign(total_pieces_, 0);
    outputs_.push_back(std::move(output));
  }
  complete_outputs_.assign(steps, 0);
  completed_at_.resize(steps);
}

void StepCollector::Report(const std::string& name, int64_t piece, double value) {
  auto found = output_index_.find(name);
  if (found == output_index_.end()) {
    monitor_->Fail(
        InternalError("a sink reported output '" + name + "', which the plan does not list"));
    return;
  }
  bool step_completed = false;
  {
    MutexLock lock(&mutex_);
    Output& output = outputs_[found->second];
    if (piece < 0 || piece >= total_pieces_ || output.reported[piece] == output.sinks) {
      monitor_->Fail(InternalError(
          "output '" + name + "': piece " + std::to_string(piece) +
          (piece >= 0 && piece < total_pieces_
               ? " was reported more often than the plan has sinks for it"
               : " is outside the job's " + std::to_string(total_pieces_) + " pieces")));
      return;
    }
    ++output.reported[piece];
    int64_t step = piece / pieces_per_step_;
    output.sum[step] += value;
    if (++output.count[step] == pieces_per_step_ * output.sinks &&
        ++complete_outputs_[step] == static_cast<int>(outputs_.size())) {
      completed_at_[step] = std::chrono::steady_clock::now();
      step_completed = true;
    }
  }
  if (step_completed && notify_steps_) monitor_->Notify();
}

std::vector<CollectedStep> StepCollector::TakeCompletedSteps() {
  std::vector<CollectedStep> steps;
  MutexLock lock(&mutex_);
  if (outputs_.empty()) return steps;
  while (next_step_ < static_cast<int64_t>(complete_outputs_.size()) &&
         complete_outputs_[next_step_] == static_cast<int>(outputs_.size())) {
    CollectedStep step;
    step.step = next_step_;
    step.completed_at = completed_at_[next_step_];
    for (const Output& output : outputs_) {
      step.outputs[output.name] =
          output.sum[next_step_] / static_cast<double>(pieces_per_step_ * output.sinks);
    }
    steps.push_back(std::move(step));
    ++next_step_;
  }
  return steps;
}

}  // namespace runtime
}  // namespace softwire
