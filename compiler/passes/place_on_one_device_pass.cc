// place_on_one_device: every op on the cluster's first device. The stand-in for placement,
// sbp choice and boxing insertion until a job may span several devices.
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

Status RequireOneDevice(const std::string& where, const proto::Parallelism& parallel) {
  struct Degree {
    const char* name;
    int32_t value;
  };
  for (const Degree& degree : {Degree{"data_parallel", parallel.data_parallel()},
                               Degree{"tensor_parallel", parallel.tensor_parallel()},
                               Degree{"pipeline_stages", parallel.pipeline_stages()}}) {
    if (degree.value < 0) {
      return InvalidArgumentError(where + "." + degree.name + " must be >= 0");
    }
    if (degree.value > 1) {
      return UnimplementedError(where + "." + degree.name + " = " + std::to_string(degree.value) +
                                " needs several devices; this compiler plans one device so far");
    }
  }
  return Status::Ok();
}

}  // namespace

Status PlaceOnOneDevicePass(Compilation& compilation) {
  SOFTWIRE_RETURN_IF_ERROR(RequireOneDevice("parallel", compilation.job().parallel()));
  SOFTWIRE_RETURN_IF_ERROR(RequireOneDevice("options.parallel", compilation.options().parallel));
  CHECK(!compilation.devices.empty()) << "resolve_cluster left no device";
  for (OpId id = 0; id < compilation.graph.op_count(); ++id) {
    compilation.graph.mutable_op(id).device = compilation.devices.front().id;
  }
  compilation.placed = true;
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
