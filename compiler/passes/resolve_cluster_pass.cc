// resolve_cluster: the devices the plan may use, numbered node by node.
#include <set>
#include <thread>

#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

// Cost-model figures when the cluster leaves them 0. CPU: one Zen 3 core's FMA peak and a
// memory triad (shared/ANCHORS.md); CUDA: a conservative fraction of an H100.
struct KindDefaults {
  double flops;
  double memory_bandwidth;
};

KindDefaults DefaultsFor(proto::DeviceKind kind) {
  switch (kind) {
    case proto::DEVICE_KIND_CUDA:
      return {20e12, 1.5e12};
    case proto::DEVICE_KIND_CPU:
    case proto::DEVICE_KIND_SIM:
    default:
      return {100e9, 20e9};
  }
}

proto::Cluster DefaultCluster() {
  proto::Cluster cluster;
  proto::NodeSpec* node = cluster.add_node();
  node->set_name("node0");
  proto::DeviceSpec* device = node->add_device();
  device->set_name("cpu:0");
  device->set_kind(proto::DEVICE_KIND_CPU);
  device->set_cores(static_cast<int32_t>(std::max(1u, std::thread::hardware_concurrency())));
  device->set_memory_bytes(0);
  return cluster;
}

Status ClusterError(const std::string& message) {
  return InvalidArgumentError("cluster: " + message);
}

Status CheckDevice(const std::string& node, const proto::DeviceSpec& device) {
  std::string where = "device '" + node + "/" + device.name() + "'";
  if (device.kind() == proto::DEVICE_KIND_UNSPECIFIED) return ClusterError(where + " has no kind");
  if (device.memory_bytes() < 0) return ClusterError(where + " has negative memory_bytes");
  if (device.cores() < 0) return ClusterError(where + " has negative cores");
  if (device.flops() < 0 || device.memory_bandwidth() < 0) {
    return ClusterError(where + " has a negative flops or memory_bandwidth");
  }
  return Status::Ok();
}

TargetDevice MakeTarget(int id, const std::string& node, proto::DeviceSpec spec) {
  KindDefaults defaults = DefaultsFor(spec.kind());
  if (spec.flops() == 0) spec.set_flops(defaults.flops);
  if (spec.memory_bandwidth() == 0) spec.set_memory_bandwidth(defaults.memory_bandwidth);
  if (spec.cores() == 0) spec.set_cores(1);
  TargetDevice target;
  target.id = id;
  target.node = node;
  target.spec = std::move(spec);
  return target;
}

}  // namespace

Status ResolveClusterPass(Compilation& compilation) {
  const proto::Cluster& given = compilation.options().cluster;
  const proto::Cluster cluster = given.node_size() == 0 ? DefaultCluster() : given;
  std::set<std::string> nodes;
  for (const proto::NodeSpec& node : cluster.node()) {
    if (node.name().empty()) return ClusterError("a node has no name");
    if (!nodes.insert(node.name()).second) {
      return ClusterError("node '" + node.name() + "' is listed twice");
    }
    if (node.device_size() == 0) return ClusterError("node '" + node.name() + "' has no device");
    std::set<std::string> names;
    for (const proto::DeviceSpec& device : node.device()) {
      if (device.name().empty())
        return ClusterError("node '" + node.name() + "' has an unnamed device");
      if (!names.insert(device.name()).second) {
        return ClusterError("device '" + node.name() + "/" + device.name() + "' is listed twice");
      }
      SOFTWIRE_RETURN_IF_ERROR(CheckDevice(node.name(), device));
      int id = static_cast<int>(compilation.devices.size());
      compilation.devices.push_back(MakeTarget(id, node.name(), device));
    }
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
