// Registration functions of the cuda kernel families, one per source file. RegisterCudaKernels
// (cuda_kernels.cc) calls them all with the cpu registry their entries validate against.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_KERNEL_FAMILIES_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_KERNEL_FAMILIES_H_

#include <memory>
#include <string>

#include "runtime/kernels/cuda/cuda_kernel.h"

namespace softwire {
namespace runtime {

// Makes a cuda kernel for a KernelDef the cpu registry already accepted.
using CudaKernelMaker = std::function<StatusOr<std::unique_ptr<Kernel>>(const KernelSetup&)>;

// The cpu kernel of setup.actor, its error without the "actor 'x': " prefix (the registry that
// returns it adds its own).
StatusOr<std::unique_ptr<Kernel>> CreateCpuKernel(const KernelRegistry& cpu,
                                                  const KernelSetup& setup);

// Registers `op_type`: validate with the cpu kernel, then `make`. `cpu` is shared by every
// entry (shared_ptr: the entries own it together; it lives as long as the last of them).
void RegisterValidated(KernelRegistry* registry, const std::shared_ptr<const KernelRegistry>& cpu,
                       const std::string& op_type, CudaKernelMaker make);

void RegisterCudaMatmulKernels(KernelRegistry* registry,
                               const std::shared_ptr<const KernelRegistry>& cpu);  // matmul,
                                                                                   // batch_matmul
void RegisterCudaElementwiseKernels(KernelRegistry* registry,
                                    const std::shared_ptr<const KernelRegistry>& cpu);
void RegisterCudaRowKernels(KernelRegistry* registry,
                            const std::shared_ptr<const KernelRegistry>& cpu);
// transpose, slice, assemble, flat_split, flat_concat, cast (layout_cuda_kernels.cc).
void RegisterCudaLayoutKernels(KernelRegistry* registry,
                               const std::shared_ptr<const KernelRegistry>& cpu);
// embedding, embedding_grad (embedding_cuda_kernels.cc).
void RegisterCudaEmbeddingKernels(KernelRegistry* registry,
                                  const std::shared_ptr<const KernelRegistry>& cpu);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_KERNEL_FAMILIES_H_
