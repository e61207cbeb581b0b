// resolve_cluster: the devices the plan may use, numbered node by node, with the cost model's
// figures (placement/cluster_model.h fills in each kind's defaults).
#include <thread>

#include "compiler/passes/passes.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace compiler {

Status ResolveClusterPass(Compilation& compilation) {
  const proto::Cluster& given = compilation.options().cluster;
  SOFTWIRE_ASSIGN_OR_RETURN(
      placement::ClusterModel model,
      placement::ClusterModel::Build(
          given.node_size() == 0
              ? placement::SingleCpuCluster(static_cast<int>(std::thread::hardware_concurrency()))
              : given,
          compilation.options().NativeBf16()));
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
