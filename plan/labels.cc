#include "plan/labels.h"

namespace softwire {
namespace plan {

std::string ActorLabel(const std::string& name) {
  return "actor '" + name + "'";
}

std::string ActorLabel(const std::string& name, int64_t id) {
  return ActorLabel(name) + " (" + std::to_string(id) + ")";
}

std::string ActorLabel(const proto::ActorDef& actor) {
  return ActorLabel(actor.name(), actor.id());
}

std::string RegisterLabel(const std::string& name) {
  return "register '" + name + "'";
}

std::string RegisterLabel(const std::string& name, int64_t id) {
  return RegisterLabel(name) + " (" + std::to_string(id) + ")";
}

std::string RegisterLabel(const proto::RegisterDef& register_def) {
  return RegisterLabel(register_def.name(), register_def.id());
}

std::string DeviceName(const proto::PlanDevice& device) {
  return device.node().empty() ? device.name() : device.node() + "/" + device.name();
}

std::string DeviceLabel(const proto::PlanDevice& device) {
  return "device " + std::to_string(device.id()) + " (" + DeviceName(device) + ")";
}

}  // namespace plan
}  // namespace softwire
