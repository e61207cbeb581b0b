// PlanPartition: the part of a plan that one node hosts, and the edges that leave it.
//
//   StatusOr<PlanPartition> part = PartitionPlan(plan, "node1");
//   for (const PlanEdge& edge : part->incoming) { /* a value that arrives from edge.peer_node */ }
//
// A node hosts the devices whose `node` is its name, every actor bound to one of them, and
// every register whose memory lies on one of them. An edge leaves the node where a register's
// producer and one of its consumers are hosted by different nodes: `outgoing` when the producer
// is here (Ready goes out, Release comes back), `incoming` when the consumer is here. Edges are
// found from the plan's structure alone; no actor kind is assumed at either end.
//
// Pure function of the plan; thread-safe. The partition holds ids into the plan, which the
// caller keeps. The plan must have passed CheckIds (plan/plan_invariants.h).
#ifndef SOFTWIRE_PLAN_PLAN_PARTITION_H_
#define SOFTWIRE_PLAN_PLAN_PARTITION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace plan {

// One register read across a node boundary: its producer on one node, one consumer on another.
struct PlanEdge {
  int64_t register_id = -1;
  int64_t producer = -1;  // Actor id.
  int64_t consumer = -1;  // Actor id.
  int phase = 0;          // The consumer's phase (docs/PROTOCOL.md).
  std::string peer_node;  // The node on the other side of the edge.
};

struct PlanPartition {
  std::string node;
  std::vector<int64_t> devices;    // Ids of the node's devices, ascending.
  std::vector<int64_t> actors;     // Ids of the actors on those devices, ascending.
  std::vector<int64_t> registers;  // Ids of the registers in their arenas, ascending.
  // Registers produced here and consumed on another node, by register id then plan order of
  // the consumers.
  std::vector<PlanEdge> outgoing;
  // Registers produced on another node and consumed here, in the same order.
  std::vector<PlanEdge> incoming;
};

// The nodes a plan's devices name, in the order of their first device.
std::vector<std::string> PlanNodes(const proto::Plan& plan);

// The part of `plan` that `node` hosts. NotFound when no device of the plan is on `node`.
StatusOr<PlanPartition> PartitionPlan(const proto::Plan& plan, const std::string& node);

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_PLAN_PARTITION_H_
