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

const char* ActorKindName(proto::ActorKind kind) {
  switch (kind) {
    case proto::ACTOR_KIND_UNSPECIFIED:
      return "unspecified";
    case proto::ACTOR_KIND_SOURCE:
      return "source";
    case proto::ACTOR_KIND_COMPUTE:
      return "compute";
    case proto::ACTOR_KIND_VARIABLE:
      return "variable";
    case proto::ACTOR_KIND_ACCUMULATE:
      return "accumulate";
    case proto::ACTOR_KIND_UPDATE:
      return "update";
    case proto::ACTOR_KIND_SINK:
      return "sink";
    case proto::ACTOR_KIND_COPY:
      return "copy";
    case proto::ACTOR_KIND_SEND:
      return "send";
    case proto::ACTOR_KIND_RECV:
      return "recv";
    case proto::ACTOR_KIND_BOXING:
      return "boxing";
    default:
      return "unknown";
  }
}

const char* DeviceKindName(proto::DeviceKind kind) {
  switch (kind) {
    case proto::DEVICE_KIND_UNSPECIFIED:
      return "unspecified";
    case proto::DEVICE_KIND_CPU:
      return "cpu";
    case proto::DEVICE_KIND_SIM:
      return "sim";
    case proto::DEVICE_KIND_CUDA:
      return "cuda";
    default:
      return "unknown";
  }
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
