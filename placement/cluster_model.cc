#include "placement/cluster_model.h"

#include <limits>
#include <map>
#include <set>

namespace softwire {
namespace placement {
namespace {

Status ClusterError(const std::string& message) {
  return InvalidArgumentError("cluster: " + message);
}

Status CheckDevice(const std::string& node, const proto::DeviceSpec& device) {
  std::string where = "device '" + node + "/" + device.name() + "'";
  if (device.kind() == proto::DEVICE_KIND_UNSPECIFIED) return ClusterError(where + " has no kind");
  if (device.memory_bytes() < 0) return ClusterError(where + " has negative memory_bytes");
  if (device.cores() < 0) return ClusterError(where + " has negative cores");
  if (device.flops() < 0 || device.memory_bandwidth() < 0 || device.bf16_flops() < 0) {
    return ClusterError(where + " has a negative flops, bf16_flops or memory_bandwidth");
  }
  return Status::Ok();
}

ModelDevice MakeDevice(int id, const std::string& node, int node_index, proto::DeviceSpec spec,
                       bool cpu_native_bf16) {
  DeviceKindDefaults defaults = DefaultsFor(spec.kind(), cpu_native_bf16);
  if (spec.flops() == 0) spec.set_flops(defaults.flops);
  if (spec.bf16_flops() == 0) spec.set_bf16_flops(spec.flops() * defaults.bf16_speedup);
  if (spec.memory_bandwidth() == 0) spec.set_memory_bandwidth(defaults.memory_bandwidth);
  if (spec.memory_bytes() == 0) spec.set_memory_bytes(defaults.memory_bytes);
  if (spec.cores() == 0) spec.set_cores(1);
  ModelDevice device;
  device.id = id;
  device.node = node;
  device.node_index = node_index;
  device.spec = std::move(spec);
  return device;
}

// A link spec's figures, each 0 field replaced by the fallback's.
LinkFigures Figures(const proto::LinkSpec& spec, double bandwidth, double latency) {
  return {spec.bandwidth() > 0 ? spec.bandwidth() : bandwidth,
          spec.latency() > 0 ? spec.latency() : latency};
}

}  // namespace

DeviceKindDefaults DefaultsFor(proto::DeviceKind kind, bool cpu_native_bf16) {
  switch (kind) {
    case proto::DEVICE_KIND_SIM:
      return {100e12, 2e12, int64_t{16} << 30, 2.0};
    case proto::DEVICE_KIND_CUDA:
      return {20e12, 1.5e12, 0, 2.0};
    case proto::DEVICE_KIND_CPU:
    default:
      return {100e9, 20e9, 0, cpu_native_bf16 ? 2.0 : 1.0};
  }
}

const ModelDevice& ClusterModel::device(int id) const {
  CHECK(id >= 0 && id < device_count()) << "device " << id << " out of range";
  return devices_[id];
}

const LinkFigures& ClusterModel::Link(int from, int to) const {
  CHECK(from >= 0 && from < device_count() && to >= 0 && to < device_count())
      << "link " << from << " -> " << to;
  return links_[static_cast<size_t>(from) * devices_.size() + to];
}

StatusOr<ClusterModel> ClusterModel::Build(const proto::Cluster& cluster, bool cpu_native_bf16) {
  ClusterModel model;
  std::map<std::string, int> node_index;
  std::map<std::string, int> device_index;  // "node/device" -> id.
  for (const proto::NodeSpec& node : cluster.node()) {
    if (node.name().empty()) return ClusterError("a node has no name");
    if (!node_index.emplace(node.name(), static_cast<int>(node_index.size())).second) {
      return ClusterError("node '" + node.name() + "' is listed twice");
    }
    if (node.device_size() == 0) return ClusterError("node '" + node.name() + "' has no device");
    for (const proto::DeviceSpec& device : node.device()) {
      if (device.name().empty()) {
        return ClusterError("node '" + node.name() + "' has an unnamed device");
      }
      const std::string full_name = node.name() + "/" + device.name();
      if (device_index.count(full_name) > 0) {
        return ClusterError("device '" + full_name + "' is listed twice");
      }
      SOFTWIRE_RETURN_IF_ERROR(CheckDevice(node.name(), device));
      int id = model.device_count();
      device_index[full_name] = id;
      model.devices_.push_back(
          MakeDevice(id, node.name(), node_index.at(node.name()), device, cpu_native_bf16));
    }
  }
  if (model.devices_.empty()) return ClusterError("it has no node");

  const LinkFigures intra =
      Figures(cluster.default_intra_node_link(), kIntraNodeBandwidth, kIntraNodeLatency);
  const LinkFigures inter =
      Figures(cluster.default_inter_node_link(), kInterNodeBandwidth, kInterNodeLatency);
  const size_t n = model.devices_.size();
  model.links_.resize(n * n);
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      LinkFigures& link = model.links_[a * n + b];
      if (a == b) {
        link = {std::numeric_limits<double>::infinity(), 0};
      } else {
        link = model.devices_[a].node_index == model.devices_[b].node_index ? intra : inter;
      }
    }
  }
  // An end names a device ("node0/cpu:1") or every device of a node ("node0").
  auto ends = [&](const std::string& name, std::vector<int>* ids) -> Status {
    auto device = device_index.find(name);
    if (device != device_index.end()) {
      ids->push_back(device->second);
      return Status::Ok();
    }
    if (node_index.count(name) == 0) {
      return ClusterError("link end '" + name + "' names no node and no device");
    }
    for (const ModelDevice& candidate : model.devices_) {
      if (candidate.node == name) ids->push_back(candidate.id);
    }
    return Status::Ok();
  };
  for (const proto::LinkSpec& spec : cluster.link()) {
    if (spec.bandwidth() <= 0 || spec.latency() < 0) {
      return ClusterError("link '" + spec.from() + "' - '" + spec.to() +
                          "' needs bandwidth > 0 and latency >= 0");
    }
    std::vector<int> from;
    std::vector<int> to;
    SOFTWIRE_RETURN_IF_ERROR(ends(spec.from(), &from));
    SOFTWIRE_RETURN_IF_ERROR(ends(spec.to(), &to));
    for (int a : from) {
      for (int b : to) {
        if (a == b) continue;
        model.links_[a * n + b] = {spec.bandwidth(), spec.latency()};
        model.links_[b * n + a] = {spec.bandwidth(), spec.latency()};
      }
    }
  }
  return model;
}

}  // namespace placement
}  // namespace softwire
