// RegisterCudaKernels: the kernels of cuda devices, one registry entry per op they run.
//
// Every entry first creates the op's cpu kernel from a cpu registry of its own and discards it:
// that checks the KernelDef (signature, shapes, attributes) with exactly the cpu kernels'
// checks and errors, once, at load time, so the cuda kernels read only the numbers they need.
// An op without an entry here is refused when the plan is loaded, naming the op, the actor and
// the device (CudaDevice::CreateKernel); CudaKernelCoverage lists what is missing.
//
// Threading: registration happens once; the registry is read-only afterwards.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_KERNELS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_KERNELS_H_

#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

void RegisterCudaKernels(KernelRegistry* registry);

// The op types of the cpu registry that the cuda registry lacks, sorted.
std::vector<std::string> OpsMissingOnCuda();

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_KERNELS_H_
