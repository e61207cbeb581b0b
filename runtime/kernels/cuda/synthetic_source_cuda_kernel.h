// The source of a synthetic dataset on a cuda device, computed on the device: its values are a
// pure function of (seed, output, element index) (data/synthetic_dataset.h, base/random.h), so
// the GPU draws the micro-batch itself instead of a host function drawing it on CUDA's callback
// thread and copying it over (HostStagedKernel). Measured on an H200: the 4x4096 MLP's batch of
// 512 x 4096 normals took 43 ms a step on the host, stopping the stream for all of it
// (docs/CUDA.md).
//
// Values: int32 outputs equal the host's bit for bit; float32 outputs are the host's Box-Muller
// in double precision with CUDA's log and cos, which differ from glibc's by a unit in the last
// place of the double at most: equal as floats in practice (cuda_kernels_gpu_test counts them).
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_SYNTHETIC_SOURCE_CUDA_KERNEL_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_SYNTHETIC_SOURCE_CUDA_KERNEL_H_

#include <memory>

#include "runtime/kernels/cuda/cuda_kernel.h"

namespace softwire {
namespace runtime {

// True when setup.actor is a source whose dataset is synthetic with float32 and int32 outputs
// only (what the device kernel draws).
bool IsDeviceSyntheticSource(const KernelSetup& setup);

// The device kernel of such a source. The KernelDef must have passed the cpu source kernel's
// checks (cuda_kernels.cc does that first).
StatusOr<std::unique_ptr<Kernel>> MakeSyntheticSourceCudaKernel(const KernelSetup& setup);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_SYNTHETIC_SOURCE_CUDA_KERNEL_H_
