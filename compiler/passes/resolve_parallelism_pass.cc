// resolve_parallelism: the degrees of data, tensor and pipeline parallelism, the devices they
// use and one device mesh per pipeline stage (docs/PARALLELISM.md, "Parallel settings").
//
// Each degree comes from CompileOptions.parallel when set there (> 0), else from the job's
// `parallel` section, else 1. The plan uses the first dp * tp * pp devices of the cluster, in
// cluster order; stage s takes devices [s*dp*tp, (s+1)*dp*tp) arranged [dp][tp], tp fastest,
// so a tensor-parallel group sits on neighbouring devices (one node when it fits).
#include <limits>

#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

struct Degree {
  const char* field;
  int32_t from_job;
  int32_t from_options;
  int* value;
};

Status ResolveDegree(const Compilation& compilation, const Degree& degree) {
  if (degree.from_job < 0) {
    return compilation.ErrorAt(0, std::string("parallel.") + degree.field + " must be >= 0, got " +
                                      std::to_string(degree.from_job));
  }
  if (degree.from_options < 0) {
    return InvalidArgumentError(std::string("options: parallel.") + degree.field +
                                " must be >= 0, got " + std::to_string(degree.from_options));
  }
  *degree.value =
      degree.from_options > 0 ? degree.from_options : (degree.from_job > 0 ? degree.from_job : 1);
  return Status::Ok();
}

// data * tensor * pipeline without overflow (ParallelSettings::devices() is an int product,
// for degrees known to fit the cluster): the first product of two ints fits in int64, the
// second saturates.
int64_t DevicesNeeded(const ParallelSettings& parallel) {
  const int64_t product = int64_t{parallel.data} * parallel.tensor;
  if (product > std::numeric_limits<int64_t>::max() / parallel.pipeline) {
    return std::numeric_limits<int64_t>::max();
  }
  return product * parallel.pipeline;
}

std::string DeviceRange(const std::vector<TargetDevice>& devices) {
  if (devices.size() == 1) return devices.front().FullName();
  return devices.front().FullName() + " .. " + devices.back().FullName();
}

}  // namespace

Status ResolveParallelismPass(Compilation& compilation) {
  const proto::Parallelism& job = compilation.job().parallel();
  const proto::Parallelism& options = compilation.options().parallel;
  ParallelSettings& parallel = compilation.parallel;
  for (const Degree& degree :
       {Degree{"data_parallel", job.data_parallel(), options.data_parallel(), &parallel.data},
        Degree{"tensor_parallel", job.tensor_parallel(), options.tensor_parallel(),
               &parallel.tensor},
        Degree{"pipeline_stages", job.pipeline_stages(), options.pipeline_stages(),
               &parallel.pipeline}}) {
    SOFTWIRE_RETURN_IF_ERROR(ResolveDegree(compilation, degree));
  }
  const int64_t needed = DevicesNeeded(parallel);
  if (needed > static_cast<int64_t>(compilation.devices.size())) {
    return compilation.ErrorAt(
        0, "parallel: data_parallel " + std::to_string(parallel.data) + " x tensor_parallel " +
               std::to_string(parallel.tensor) + " x pipeline_stages " +
               std::to_string(parallel.pipeline) + " needs " + std::to_string(needed) +
               " devices but the cluster has " + std::to_string(compilation.devices.size()) + " (" +
               DeviceRange(compilation.devices) + ")");
  }
  const int64_t batch = compilation.schedule.micro_batch_size;
  if (batch % parallel.data != 0) {
    const std::string field =
        compilation.schedule.training ? "train.micro_batch_size" : "micro_batch_size";
    return compilation.ErrorAt(compilation.job_file().train_line,
                               field + " " + std::to_string(batch) +
                                   " does not split evenly over data_parallel " +
                                   std::to_string(parallel.data));
  }
  compilation.devices.resize(static_cast<size_t>(needed));
  compilation.meshes.clear();
  const int per_stage = parallel.data * parallel.tensor;
  for (int stage = 0; stage < parallel.pipeline; ++stage) {
    placement::DeviceMesh mesh;
    mesh.shape = {parallel.data, parallel.tensor};
    for (int i = 0; i < per_stage; ++i) mesh.devices.push_back(stage * per_stage + i);
    compilation.meshes.push_back(std::move(mesh));
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
