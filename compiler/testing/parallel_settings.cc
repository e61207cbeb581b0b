#include "compiler/testing/parallel_settings.h"

#include <glog/logging.h>

#include <string>

#include "placement/cluster_spec.h"

namespace softwire {
namespace compiler {

void PrintTo(const ParallelSetting& setting, std::ostream* out) {
  *out << setting.name;
}

const ParallelSetting kParallelSettings[8] = {
    {"dp2", 2, 1, 1}, {"dp4", 4, 1, 1},     {"tp2", 1, 2, 1},     {"pp2", 1, 1, 2},
    {"pp4", 1, 1, 4}, {"dp2_pp2", 2, 1, 2}, {"dp2_tp2", 2, 2, 1}, {"dp2_tp2_pp2", 2, 2, 2},
};

CompileOptions ParallelOptions(const ParallelSetting& setting, int cpu_devices) {
  CHECK_GE(cpu_devices, setting.Devices()) << setting.name;
  StatusOr<proto::Cluster> cluster =
      placement::ParseClusterShorthand(std::to_string(cpu_devices) + "cpu", 8);
  CHECK(cluster.ok()) << cluster.status();
  CompileOptions options;
  options.cluster = *cluster;
  options.parallel.set_data_parallel(setting.dp);
  options.parallel.set_tensor_parallel(setting.tp);
  options.parallel.set_pipeline_stages(setting.pp);
  return options;
}

}  // namespace compiler
}  // namespace softwire
