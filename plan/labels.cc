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

std::string DeviceThreadName(const proto::PlanDevice& device, int thread) {
  std::string name;
  for (char c : device.name()) {
    if (c != ':') name += c;
  }
  std::string node = device.node();
  if (node == "node0") {
    node.clear();
  } else if (node.rfind("node", 0) == 0) {
    node = "n" + node.substr(4);
  }
  return "sw:" + node + name + "/k" + std::to_string(thread);
}

}  // namespace plan
}  // namespace softwire
