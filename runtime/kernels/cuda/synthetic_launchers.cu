// Device code of the cuda synthetic source: the host's counter hash (base/counter_hash.h) in a
// grid-stride loop, one value per thread and step.
#include <algorithm>

#include "base/counter_hash.h"
#include "runtime/kernels/cuda/synthetic_launchers.h"

namespace softwire {
namespace runtime {
namespace cuda {
namespace {

constexpr int kThreads = 256;

int BlocksFor(int64_t count) {
  return static_cast<int>(std::min<int64_t>((count + kThreads - 1) / kThreads, 65535));
}

__global__ void NormalsKernel(uint64_t mixed_seed, uint64_t first, int64_t count, float* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const uint64_t index = first + static_cast<uint64_t>(i);
    // base/random.cc's NormalAt, in its order: sqrt(-2 log(1 - u1)) * cos(2 pi u2).
    const double u1 = 1.0 - counter_hash::UnitOf(counter_hash::HashMixed(mixed_seed, 2 * index));
    const double u2 = counter_hash::UnitOf(counter_hash::HashMixed(mixed_seed, 2 * index + 1));
    const double radius = sqrt(-2.0 * log(u1));
    const double angle = cos(2.0 * 3.14159265358979323846 * u2);
    out[i] = static_cast<float>(radius * angle);
  }
}

__global__ void IntsKernel(uint64_t mixed_seed, uint64_t first, int64_t count, int64_t bound,
                           int32_t* out) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const uint64_t index = first + static_cast<uint64_t>(i);
    out[i] = static_cast<int32_t>(
        counter_hash::IntOf(counter_hash::HashMixed(mixed_seed, index), bound));
  }
}

}  // namespace

cudaError_t SyntheticNormals(uint64_t mixed_seed, uint64_t first, int64_t count, float* out,
                             cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  NormalsKernel<<<BlocksFor(count), kThreads, 0, stream>>>(mixed_seed, first, count, out);
  return cudaGetLastError();
}

cudaError_t SyntheticInts(uint64_t mixed_seed, uint64_t first, int64_t count, int64_t bound,
                          int32_t* out, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  IntsKernel<<<BlocksFor(count), kThreads, 0, stream>>>(mixed_seed, first, count, bound, out);
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace runtime
}  // namespace softwire
