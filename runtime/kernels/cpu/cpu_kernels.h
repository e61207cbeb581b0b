// The float32 kernels of `cpu` devices: every op of docs/OPS.md and every actor-kind kernel
// (source, variable, accumulate, sgd_update, adam_update, sink).
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_CPU_KERNELS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_CPU_KERNELS_H_

#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

// Adds every cpu kernel to `registry`.
void RegisterCpuKernels(KernelRegistry* registry);

// Sets the threads BLAS calls may use (process-wide: OpenBLAS has one pool).
void SetBlasThreads(int threads);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_CPU_KERNELS_H_
