#include "plan/plan_partition.h"

#include <algorithm>

namespace softwire {
namespace plan {
namespace {

const std::string& NodeOfActor(const proto::Plan& plan, int64_t actor) {
  return plan.device(plan.actor(static_cast<int>(actor)).device()).node();
}

}  // namespace

std::vector<std::string> PlanNodes(const proto::Plan& plan) {
  std::vector<std::string> nodes;
  for (const proto::PlanDevice& device : plan.device()) {
    if (std::find(nodes.begin(), nodes.end(), device.node()) == nodes.end()) {
      nodes.push_back(device.node());
    }
  }
  return nodes;
}

StatusOr<PlanPartition> PartitionPlan(const proto::Plan& plan, const std::string& node) {
  PlanPartition partition;
  partition.node = node;
  std::vector<char> hosted_device(static_cast<size_t>(plan.device_size()), 0);
  for (const proto::PlanDevice& device : plan.device()) {
    if (device.node() != node) continue;
    hosted_device[static_cast<size_t>(device.id())] = 1;
    partition.devices.push_back(device.id());
  }
  if (partition.devices.empty()) {
    return NotFoundError("node '" + node + "' hosts no device of plan '" + plan.job_name() + "'");
  }
  for (const proto::ActorDef& actor : plan.actor()) {
    if (hosted_device[static_cast<size_t>(actor.device())]) partition.actors.push_back(actor.id());
  }
  for (const proto::RegisterDef& r : plan.register_def()) {
    if (hosted_device[static_cast<size_t>(r.device())]) partition.registers.push_back(r.id());
    const std::string& producer_node = NodeOfActor(plan, r.producer());
    for (const proto::RegisterConsumer& consumer : r.consumer()) {
      const std::string& consumer_node = NodeOfActor(plan, consumer.actor());
      if (consumer_node == producer_node) continue;
      PlanEdge edge{r.id(), r.producer(), consumer.actor(), consumer.phase(), ""};
      if (producer_node == node) {
        edge.peer_node = consumer_node;
        partition.outgoing.push_back(std::move(edge));
      } else if (consumer_node == node) {
        edge.peer_node = producer_node;
        partition.incoming.push_back(std::move(edge));
      }
    }
  }
  return partition;
}

}  // namespace plan
}  // namespace softwire
