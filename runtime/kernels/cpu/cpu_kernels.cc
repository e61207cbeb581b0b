#include "runtime/kernels/cpu/cpu_kernels.h"

#include <cblas.h>

#include "runtime/kernels/cpu/kernel_families.h"

// OpenBLAS (pthread build) ends its worker threads with this; exported, not in cblas.h.
extern "C" int blas_thread_shutdown_(void);

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
  RegisterCastKernel(registry);
  RegisterFusedKernel(registry);
  RegisterConvolutionKernels(registry);
  RegisterPoolingKernels(registry);
  RegisterBatchNormKernels(registry);
  RegisterReorderKernel(registry);
}

void SetBlasThreads(int threads) {
  CHECK_GE(threads, 1) << "BLAS needs at least one thread";
  openblas_set_num_threads(threads);
}

void RunBlasOnCallingThreads() {
  openblas_set_num_threads(1);
  blas_thread_shutdown_();
}

}  // namespace runtime
}  // namespace softwire
