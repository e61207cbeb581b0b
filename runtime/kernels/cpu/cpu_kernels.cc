#include "runtime/kernels/cpu/cpu_kernels.h"

#include <cblas.h>

#include "runtime/kernels/cpu/kernel_families.h"

namespace softwire {
namespace runtime {

void RegisterCpuKernels(KernelRegistry* registry) {
  RegisterMatmulKernels(registry);
  RegisterBroadcastKernels(registry);
  RegisterElementwiseKernels(registry);
  RegisterActivationKernels(registry);
  RegisterBiasKernels(registry);
  RegisterSoftmaxKernels(registry);
  RegisterCrossEntropyKernels(registry);
  RegisterLayerNormKernels(registry);
  RegisterReductionKernels(registry);
  RegisterTransposeKernel(registry);
  RegisterEmbeddingKernels(registry);
  RegisterOptimizerKernels(registry);
  RegisterSourceKernel(registry);
  RegisterVariableKernel(registry);
  RegisterAccumulateKernel(registry);
  RegisterSinkKernel(registry);
  RegisterTransferKernels(registry);
}

void SetBlasThreads(int threads) {
  CHECK_GE(threads, 1) << "BLAS needs at least one thread";
  openblas_set_num_threads(threads);
}

}  // namespace runtime
}  // namespace softwire
