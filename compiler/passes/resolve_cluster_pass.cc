// resolve_cluster: the devices the plan may use, numbered node by node, with the cost model's
// figures (placement/cluster_model.h fills in each kind's defaults).
#include <thread>

#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

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

}  // namespace

Status ResolveClusterPass(Compilation& compilation) {
  const proto::Cluster& given = compilation.options().cluster;
  SOFTWIRE_ASSIGN_OR_RETURN(
      placement::ClusterModel model,
      placement::ClusterModel::Build(given.node_size() == 0 ? DefaultCluster() : given));
  compilation.devices.clear();
  for (const placement::ModelDevice& device : model.devices()) {
    TargetDevice target;
    target.id = device.id;
    target.node = device.node;
    target.spec = device.spec;
    compilation.devices.push_back(std::move(target));
  }
  compilation.cluster = std::move(model);
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
