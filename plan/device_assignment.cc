#include "plan/device_assignment.h"

#include <set>
#include <string>
#include <utility>

#include "plan/labels.h"

namespace softwire {
namespace plan {

Status AssignDevices(const std::vector<proto::PlanDevice>& targets, proto::Plan* plan) {
  if (static_cast<int>(targets.size()) != plan->device_size()) {
    return InvalidArgumentError("the plan has " + std::to_string(plan->device_size()) +
                                " devices but " + std::to_string(targets.size()) +
                                " were assigned");
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < targets.size(); ++i) {
    const proto::PlanDevice& device = plan->device(static_cast<int>(i));
    const proto::PlanDevice& target = targets[i];
    const std::string what =
        "plan device " + DeviceName(device) + " assigned to " + DeviceName(target);
    if (target.kind() != device.kind()) return InvalidArgumentError(what + ": another kind");
    if (!seen.insert({target.node(), target.name()}).second) {
      return InvalidArgumentError(what + ", which is assigned twice");
    }
    if (target.memory_budget() > 0 && target.memory_budget() < device.planned_bytes()) {
      return InvalidArgumentError(what + ": it has " + std::to_string(target.memory_budget()) +
                                  " bytes, the plan needs " +
                                  std::to_string(device.planned_bytes()));
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    proto::PlanDevice* device = plan->mutable_device(static_cast<int>(i));
    device->set_node(targets[i].node());
    device->set_name(targets[i].name());
    device->set_cores(targets[i].cores());
    device->set_memory_budget(targets[i].memory_budget());
  }
  return Status::Ok();
}

}  // namespace plan
}  // namespace softwire
