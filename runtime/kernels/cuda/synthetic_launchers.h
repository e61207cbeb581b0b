// The device code of the cuda synthetic source (synthetic_source_cuda_kernel.h): plain C++
// declarations, compiled by nvcc in synthetic_launchers.cu. Each enqueues one launch on `stream`
// and returns cudaGetLastError().
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_SYNTHETIC_LAUNCHERS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_SYNTHETIC_LAUNCHERS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace softwire {
namespace runtime {
namespace cuda {

// out[i] = (float) NormalAt(seed, first + i), i in [0, count) (base/random.h): the same hash,
// Box-Muller in double precision as the host computes it, CUDA's log and cos (within 1-2 units
// in the last place of the double, so the floats equal the host's in practice).
// `mixed_seed` is counter_hash::SplitMix64(seed).
cudaError_t SyntheticNormals(uint64_t mixed_seed, uint64_t first, int64_t count, float* out,
                             cudaStream_t stream);

// out[i] = UniformIntAt(seed, first + i, bound) (base/random.h), bit for bit.
cudaError_t SyntheticInts(uint64_t mixed_seed, uint64_t first, int64_t count, int64_t bound,
                          int32_t* out, cudaStream_t stream);

}  // namespace cuda
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_SYNTHETIC_LAUNCHERS_H_
