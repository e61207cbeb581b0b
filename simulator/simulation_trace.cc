#include "simulator/simulation_trace.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace softwire {
namespace simulator {

StatusOr<std::unique_ptr<SimulationTrace>> SimulationTrace::Create(int64_t event_cap) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<trace::TraceRecorder> recorder,
                            trace::TraceRecorder::Create(std::max<int64_t>(1, event_cap), 1));
  return std::unique_ptr<SimulationTrace>(new SimulationTrace(std::move(recorder)));
}

trace::TraceLog SimulationTrace::TakeLog(const proto::Plan& plan, int64_t steps,
                                         const trace::StepWindow& window,
                                         const std::string& outcome) {
  trace::TraceLog log;
  log.plan = trace::DescribePlan(plan);
  if (steps > 0) log.plan.steps = steps;
  log.info.engine = "simulator";
  log.info.clock = "virtual";
  log.info.origin_ns = 0;
  log.info.event_cap = recorder_->event_cap();
  log.info.events_dropped = recorder_->dropped();
  log.info.window = window;
  log.info.outcome = outcome;
  // One virtual clock for every node.
  std::vector<std::string> nodes;
  for (const trace::DeviceFacts& device : log.plan.devices) {
    if (std::find(nodes.begin(), nodes.end(), device.node) == nodes.end()) {
      nodes.push_back(device.node);
    }
  }
  for (const std::string& node : nodes) log.info.clock_offsets.push_back({node, 0, 0});
  log.events = recorder_->TakeEvents();
  log.info.events_recorded = static_cast<int64_t>(log.events.size());
  return log;
}

}  // namespace simulator
}  // namespace softwire
