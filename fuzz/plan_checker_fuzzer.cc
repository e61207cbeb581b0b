// Fuzz target: what a node runs on a plan it did not compile before hosting it. Input: a
// serialized proto::Plan (plan.pb as the job service stores it). The plan is checked as
// runtime::HostedPlan::Load checks it (actors::DescribeActors: the plan invariants, the actor
// kind rules, the arena layout), then split per node (plan::PartitionPlan) and moved onto
// devices of the same kinds (plan::AssignDevices), as the job service does. Any plan must give
// a Status or pass, never a crash; what passes the checks must partition without error.
#include <google/protobuf/stubs/logging.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "fuzz/fuzz_target.h"
#include "plan/device_assignment.h"
#include "plan/plan_partition.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace {

void CheckPlan(const proto::Plan& plan) {
  StatusOr<std::vector<actors::ActorDescription>> described = actors::DescribeActors(plan);
  if (!described.ok()) return;
  for (const std::string& node : plan::PlanNodes(plan)) {
    // Every node a checked plan names hosts a part of it.
    if (!plan::PartitionPlan(plan, node).ok()) std::abort();
  }
  std::vector<proto::PlanDevice> targets(plan.device().begin(), plan.device().end());
  for (proto::PlanDevice& target : targets) {
    target.set_node("moved-" + target.node());
    target.set_memory_budget(target.planned_bytes());  // Exactly what the plan needs.
  }
  proto::Plan moved = plan;
  // Distinct devices of the same kinds with the memory it plans: a checked plan moves.
  if (!plan::AssignDevices(targets, &moved).ok()) std::abort();
}

}  // namespace
}  // namespace softwire

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  google::protobuf::LogSilencer quiet;  // Not a log line per string field that is not UTF-8.
  softwire::proto::Plan plan;
  if (!plan.ParseFromArray(data, static_cast<int>(size))) return 0;
  softwire::CheckPlan(plan);
  return 0;
}
