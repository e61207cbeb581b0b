// SimulationLayout: what the engine needs to know about each actor beyond its protocol
// description, built once from the plan: how long its kernel takes, which device queue runs it,
// and which message lane its messages take. Kept apart from the engine's live state, as
// actors/ keeps ActorDescription apart from ActorProtocol.
#ifndef SOFTWIRE_SIMULATOR_SIMULATION_LAYOUT_H_
#define SOFTWIRE_SIMULATOR_SIMULATION_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/plan.pb.h"
#include "simulator/sim_time.h"
#include "simulator/simulation_options.h"

namespace softwire {
namespace simulator {

struct SimulatedActor {
  SimTime duration_ns = 0;           // ActorDef.estimated_seconds, rounded to the nanosecond.
  int32_t queue = 0;                 // Index into SimulationLayout::queues.
  int32_t node = 0;                  // Index into SimulationLayout::nodes.
  int32_t device = 0;                // Plan device.
  int64_t period = 1;                // Pieces per firing.
  bool pipeline = false;             // Its firings count for step spans and the bubble.
  bool starts_step = false;          // Its firings mark a step's start (trace::StepStartingActors).
  bool frees_on_completion = false;  // Writes a register nobody reads (freed as it completes).
};

// One device queue: ActorDef.device and ActorDef.queue.
struct QueueInfo {
  int32_t device = 0;
  int32_t queue = 0;
};

struct SimulationLayout {
  std::vector<SimulatedActor> actors;  // By actor id.
  std::vector<QueueInfo> queues;       // Every queue some actor uses, by device then queue.
  std::vector<std::string> nodes;      // Nodes of the plan's devices, in order of appearance.
  // Distinct message latencies (LatencyModel), one event-queue lane each, and the lane of a
  // message from an actor on node a to one on node b: lane_of_node_pair[a * nodes + b].
  std::vector<SimTime> lane_latencies;
  std::vector<int32_t> lane_of_node_pair;
  int stages = 1;  // Distinct ActorDef.stage values.

  int lane(int32_t from_node, int32_t to_node) const {
    return lane_of_node_pair[static_cast<size_t>(from_node) * nodes.size() +
                             static_cast<size_t>(to_node)];
  }
};

// InvalidArgument naming the actor for an estimate that is negative or not a number, a
// negative queue, and for a negative latency. Pairs in latency.node_pairs naming nodes the plan
// does not use are ignored (a cluster may have more nodes than a plan uses). The plan's ids
// must be valid (DescribeActors checks them).
StatusOr<SimulationLayout> BuildSimulationLayout(const proto::Plan& plan,
                                                 const LatencyModel& latency);

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_SIMULATION_LAYOUT_H_
