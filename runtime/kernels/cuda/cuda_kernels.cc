#include "runtime/kernels/cuda/cuda_kernels.h"

#include <algorithm>

#include "plan/labels.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cuda/cuda_kernel_families.h"
#include "runtime/kernels/cuda/host_staged_kernel.h"
#include "runtime/kernels/cuda/synthetic_source_cuda_kernel.h"

namespace softwire {
namespace runtime {
namespace {

// The cpu registry's error without the "actor 'x': " it begins with: the cuda registry, which
// returns it, adds that prefix itself.
Status WithoutActorPrefix(const Status& status, const KernelSetup& setup) {
  const std::string prefix = plan::ActorLabel(setup.actor->name()) + ": ";
  const std::string& message = status.message();
  if (message.compare(0, prefix.size(), prefix) != 0) return status;
  return Status(status.code(), message.substr(prefix.size()));
}

}  // namespace

StatusOr<std::unique_ptr<Kernel>> CreateCpuKernel(const KernelRegistry& cpu,
                                                  const KernelSetup& setup) {
  StatusOr<std::unique_ptr<Kernel>> kernel = cpu.Create(setup);
  if (!kernel.ok()) return WithoutActorPrefix(kernel.status(), setup);
  return kernel;
}

void RegisterValidated(KernelRegistry* registry, const std::shared_ptr<const KernelRegistry>& cpu,
                       const std::string& op_type, CudaKernelMaker make) {
  registry->Register(op_type,
                     [cpu, make](const KernelSetup& setup) -> StatusOr<std::unique_ptr<Kernel>> {
                       StatusOr<std::unique_ptr<Kernel>> checked = CreateCpuKernel(*cpu, setup);
                       if (!checked.ok()) return checked.status();
                       return make(setup);
                     });
}

void RegisterCudaKernels(KernelRegistry* registry) {
  auto cpu = std::make_shared<KernelRegistry>();
  RegisterCpuKernels(cpu.get());
  std::shared_ptr<const KernelRegistry> validator = cpu;
  RegisterCudaMatmulKernels(registry, validator);
  RegisterCudaElementwiseKernels(registry, validator);
  RegisterCudaRowKernels(registry, validator);
  RegisterCudaLayoutKernels(registry, validator);
  RegisterCudaEmbeddingKernels(registry, validator);
  // Host work: the cpu kernels themselves, staged through pinned buffers in stream order;
  // except synthetic data, which the device draws itself.
  registry->Register(
      "source", [validator](const KernelSetup& setup) -> StatusOr<std::unique_ptr<Kernel>> {
        if (!IsDeviceSyntheticSource(setup)) return HostStagedKernel::Create(setup, *validator);
        StatusOr<std::unique_ptr<Kernel>> checked = CreateCpuKernel(*validator, setup);
        if (!checked.ok()) return checked.status();
        return MakeSyntheticSourceCudaKernel(setup);
      });
  for (const char* op : {"variable", "sink"}) {
    registry->Register(op, [validator](const KernelSetup& setup) {
      return HostStagedKernel::Create(setup, *validator);
    });
  }
}

std::vector<std::string> OpsMissingOnCuda() {
  KernelRegistry cpu;
  RegisterCpuKernels(&cpu);
  KernelRegistry cuda;
  RegisterCudaKernels(&cuda);
  std::vector<std::string> missing;
  for (const std::string& op : cpu.OpTypes()) {
    if (!cuda.Contains(op)) missing.push_back(op);
  }
  std::sort(missing.begin(), missing.end());
  return missing;
}

}  // namespace runtime
}  // namespace softwire
