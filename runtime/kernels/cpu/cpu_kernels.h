// The float32 kernels of `cpu` devices: every op of docs/OPS.md and every actor-kind kernel
// (source, variable, accumulate, sgd_update, adam_update, sink).
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_CPU_KERNELS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_CPU_KERNELS_H_

#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

// Adds every cpu kernel to `registry`.
void RegisterCpuKernels(KernelRegistry* registry);

// Sets the threads BLAS calls may use (process-wide: OpenBLAS has one pool). For benchmarks
// and tests that compare BLAS's own threading with the device's.
void SetBlasThreads(int threads);

// Makes every BLAS call run on the thread that makes it, and ends OpenBLAS's own pool, whose
// idle workers otherwise spin in sched_yield beside the device's kernel threads (docs/RUNTIME.md,
// "Threads"). A NodeRuntime with cpu devices calls it when it is created (unless told to give
// BLAS a pool): their kernels spread a product over the device's threads in bands themselves
// (matmul_kernels.cc). Process-wide and idempotent; a
// later SetBlasThreads(n > 1) starts OpenBLAS's pool again.
void RunBlasOnCallingThreads();

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_CPU_KERNELS_H_
