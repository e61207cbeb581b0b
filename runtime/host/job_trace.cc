#include "runtime/host/job_trace.h"

#include <algorithm>

#include "runtime/device/trace_clock.h"

namespace softwire {
namespace runtime {

StatusOr<std::unique_ptr<JobTrace>> JobTrace::Create(
    const proto::Plan& plan, const std::vector<actors::ActorDescription>& descriptions,
    const TraceOptions& options) {
  std::unique_ptr<JobTrace> trace(new JobTrace(plan, options));
  const int writers = std::max(1, static_cast<int>(descriptions.size()));
  SOFTWIRE_ASSIGN_OR_RETURN(trace->recorder_,
                            trace::TraceRecorder::Create(options.event_cap, writers));
  const int64_t pieces_per_step = std::max<int64_t>(1, plan.schedule().pieces_per_step());
  // One event per recorded firing: commit that much memory now, while the job is set up, not
  // page by page while it runs. (It would be committed by the run anyway.) Partly filled
  // chunks may need a little more, which is faulted in as it is used.
  const int64_t steps = plan.schedule().steps();
  const int64_t first_step = std::min(std::max<int64_t>(0, options.steps.first), steps);
  const int64_t end_step = options.steps.end < 0 ? steps : std::min(options.steps.end, steps);
  int64_t expected = 0;
  for (const actors::ActorDescription& description : descriptions) {
    const int64_t period = std::max<int64_t>(1, description.period);
    expected += std::max<int64_t>(0, end_step - first_step) * pieces_per_step / period;
  }
  trace->recorder_->Prefault(expected);
  for (size_t i = 0; i < descriptions.size(); ++i) {
    trace->tracers_.push_back(
        std::make_unique<ActorTracer>(trace->recorder_->writer(static_cast<int>(i)),
                                      &descriptions[i], pieces_per_step, options.steps));
  }
  return trace;
}

JobTrace::JobTrace(const proto::Plan& plan, const TraceOptions& options)
    : plan_(plan), options_(options) {}

void JobTrace::Started() {
  calibration_.Begin();
}

trace::TraceLog JobTrace::TakeLog(const std::string& outcome) {
  calibration_.End();
  trace::TraceLog log;
  log.plan = trace::DescribePlan(plan_);
  log.info.engine = "caf-runtime";
  log.info.clock = TraceClock::Description();
  log.info.origin_ns = calibration_.origin_ns();
  log.info.event_cap = options_.event_cap;
  log.info.events_dropped = recorder_->dropped();
  log.info.window = options_.steps;
  log.info.outcome = outcome;
  // One process today: every node is this one, on this clock.
  std::vector<std::string> nodes;
  for (const trace::DeviceFacts& device : log.plan.devices) {
    if (std::find(nodes.begin(), nodes.end(), device.node) == nodes.end()) {
      nodes.push_back(device.node);
    }
  }
  for (const std::string& node : nodes) log.info.clock_offsets.push_back({node, 0, 0});
  log.events = recorder_->TakeEvents();
  for (trace::TraceEvent& event : log.events) {
    event.launch = calibration_.ToNs(event.launch);
    event.start = calibration_.ToNs(event.start);
    event.end = calibration_.ToNs(event.end);
  }
  log.info.events_recorded = static_cast<int64_t>(log.events.size());
  return log;
}

}  // namespace runtime
}  // namespace softwire
