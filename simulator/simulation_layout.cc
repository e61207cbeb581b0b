#include "simulator/simulation_layout.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "plan/labels.h"
#include "trace/plan_facts.h"
#include "trace/trace_summary.h"

namespace softwire {
namespace simulator {
namespace {

Status CheckLatency(const LatencyModel& latency) {
  if (latency.message_ns < 0 || latency.inter_node_ns < 0) {
    return InvalidArgumentError("message latencies must be >= 0");
  }
  for (const NodePairLatency& pair : latency.node_pairs) {
    if (pair.latency_ns < 0) {
      return InvalidArgumentError("latency between '" + pair.node_a + "' and '" + pair.node_b +
                                  "' must be >= 0");
    }
  }
  return Status::Ok();
}

// Latency of a message from node a to node b.
SimTime NodePairDelay(const LatencyModel& latency, const std::string& a, const std::string& b) {
  if (a == b) return latency.message_ns;
  SimTime link = latency.inter_node_ns;
  for (const NodePairLatency& pair : latency.node_pairs) {
    if ((pair.node_a == a && pair.node_b == b) || (pair.node_a == b && pair.node_b == a)) {
      link = pair.latency_ns;
    }
  }
  return latency.message_ns + link;
}

void BuildLanes(const proto::Plan& plan, const LatencyModel& latency, SimulationLayout* layout) {
  std::map<std::string, int32_t> node_index;
  for (const proto::PlanDevice& device : plan.device()) {
    if (node_index.emplace(device.node(), static_cast<int32_t>(layout->nodes.size())).second) {
      layout->nodes.push_back(device.node());
    }
  }
  if (layout->nodes.empty()) layout->nodes.push_back("");
  const size_t nodes = layout->nodes.size();
  std::map<SimTime, int32_t> lane_of_latency;
  layout->lane_of_node_pair.resize(nodes * nodes);
  for (size_t a = 0; a < nodes; ++a) {
    for (size_t b = 0; b < nodes; ++b) {
      const SimTime delay = NodePairDelay(latency, layout->nodes[a], layout->nodes[b]);
      auto found = lane_of_latency.emplace(delay, static_cast<int32_t>(lane_of_latency.size()));
      if (found.second) layout->lane_latencies.push_back(delay);
      layout->lane_of_node_pair[a * nodes + b] = found.first->second;
    }
  }
  for (const proto::ActorDef& actor : plan.actor()) {
    const std::string& node = plan.device(actor.device()).node();
    layout->actors[static_cast<size_t>(actor.id())].node =
        node_index.count(node) ? node_index[node] : 0;
  }
}

}  // namespace

StatusOr<SimulationLayout> BuildSimulationLayout(const proto::Plan& plan,
                                                 const LatencyModel& latency) {
  SOFTWIRE_RETURN_IF_ERROR(CheckLatency(latency));
  SimulationLayout layout;
  layout.actors.resize(static_cast<size_t>(plan.actor_size()));
  bool has_compute = false;
  for (const proto::ActorDef& actor : plan.actor()) {
    has_compute |= actor.kind() == proto::ACTOR_KIND_COMPUTE;
  }
  // Steps start where the trace summary says they do, so the two bubbles agree.
  const std::vector<bool> starts_step = trace::StepStartingActors(trace::DescribePlan(plan));
  std::set<std::pair<int32_t, int32_t>> queues;
  std::set<int32_t> stages;
  std::vector<bool> read(static_cast<size_t>(plan.register_def_size()), false);
  for (const proto::RegisterDef& register_def : plan.register_def()) {
    read[static_cast<size_t>(register_def.id())] = register_def.consumer_size() > 0;
  }
  for (const proto::ActorDef& actor : plan.actor()) {
    const double seconds = actor.estimated_seconds();
    if (std::isnan(seconds) || seconds < 0) {
      return InvalidArgumentError(plan::ActorLabel(actor) + ": estimated_seconds " +
                                  std::to_string(seconds) + " must be a number >= 0");
    }
    if (actor.queue() < 0) {
      return InvalidArgumentError(plan::ActorLabel(actor) + ": queue " +
                                  std::to_string(actor.queue()) + " must be >= 0");
    }
    SimulatedActor& simulated = layout.actors[static_cast<size_t>(actor.id())];
    simulated.duration_ns = SecondsToSimTime(seconds);
    simulated.device = actor.device();
    simulated.period = std::max<int64_t>(1, actor.period());
    simulated.pipeline = !has_compute || actor.kind() == proto::ACTOR_KIND_COMPUTE;
    simulated.starts_step = starts_step[static_cast<size_t>(actor.id())];
    for (int64_t output : actor.output_register()) {
      simulated.frees_on_completion |= !read[static_cast<size_t>(output)];
    }
    queues.emplace(actor.device(), actor.queue());
    stages.insert(actor.stage());
  }
  // Queues by device, then queue number: std::set's order.
  std::map<std::pair<int32_t, int32_t>, int32_t> queue_index;
  for (const auto& queue : queues) {
    queue_index[queue] = static_cast<int32_t>(layout.queues.size());
    layout.queues.push_back(QueueInfo{queue.first, queue.second});
  }
  for (const proto::ActorDef& actor : plan.actor()) {
    layout.actors[static_cast<size_t>(actor.id())].queue =
        queue_index[{actor.device(), actor.queue()}];
  }
  layout.stages = std::max<int>(1, static_cast<int>(stages.size()));
  BuildLanes(plan, latency, &layout);
  return layout;
}

}  // namespace simulator
}  // namespace softwire
