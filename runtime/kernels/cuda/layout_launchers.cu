// The device code of layout_launchers.h: grid-stride loops over 256-thread blocks, one element
// per iteration.
#include <cmath>

#include "runtime/kernels/cuda/layout_launchers.h"

namespace softwire {
namespace runtime {
namespace cuda {
namespace {

constexpr int kThreads = 256;

// Enough blocks for `n` threads, at most what keeps an H100/H200 busy (grid-stride beyond).
unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

__device__ int64_t FirstIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ int64_t GridStride() {
  return static_cast<int64_t>(blockDim.x) * gridDim.x;
}

__device__ int64_t OffsetIn(const StridedBlock& block, int64_t index) {
  int64_t offset = block.base;
  for (int axis = block.rank - 1; axis >= 0; --axis) {
    offset += (index % block.dims[axis]) * block.strides[axis];
    index /= block.dims[axis];
  }
  return offset;
}

// base/bfloat16.h's ToBFloat16 and ToFloat, bit for bit.
__device__ uint16_t RoundToBFloat16(float value) {
  const uint32_t bits = __float_as_uint(value);
  const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return static_cast<uint16_t>(nan ? ((bits >> 16) | 0x40u) : (rounded >> 16));
}
__device__ float WidenBFloat16(uint16_t value) {
  return __uint_as_float(static_cast<uint32_t>(value) << 16);
}

template <typename T>
__global__ void GatherBlockKernel(const T* x, T* y, StridedBlock block) {
  for (int64_t i = FirstIndex(); i < block.count; i += GridStride()) y[i] = x[OffsetIn(block, i)];
}

__global__ void AddFloatsIntoBlockKernel(const float* x, float* y, StridedBlock block) {
  for (int64_t i = FirstIndex(); i < block.count; i += GridStride()) {
    float* target = y + OffsetIn(block, i);
    *target = *target + x[i];
  }
}

__global__ void AddIntsIntoBlockKernel(const int32_t* x, int32_t* y, StridedBlock block) {
  for (int64_t i = FirstIndex(); i < block.count; i += GridStride()) {
    int32_t* target = y + OffsetIn(block, i);
    *target = static_cast<int32_t>(static_cast<uint32_t>(*target) + static_cast<uint32_t>(x[i]));
  }
}

__global__ void AddBFloat16sIntoBlockKernel(const uint16_t* x, uint16_t* y, StridedBlock block) {
  for (int64_t i = FirstIndex(); i < block.count; i += GridStride()) {
    uint16_t* target = y + OffsetIn(block, i);
    *target = RoundToBFloat16(__fadd_rn(WidenBFloat16(*target), WidenBFloat16(x[i])));
  }
}

__global__ void FloatToBFloat16Kernel(const float* x, uint16_t* y, int64_t n) {
  for (int64_t i = FirstIndex(); i < n; i += GridStride()) y[i] = RoundToBFloat16(x[i]);
}

__global__ void BFloat16ToFloatKernel(const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = FirstIndex(); i < n; i += GridStride()) y[i] = WidenBFloat16(x[i]);
}

// The local row of `id`, or -1 when this part does not hold it.
__device__ int64_t LocalRow(int32_t id, const EmbeddingRows& part) {
  const int64_t row = static_cast<int64_t>(id) - part.first;
  return row >= 0 && row < part.rows ? row : -1;
}

__global__ void EmbeddingLookupKernel(const float* table, const int32_t* ids, float* y,
                                      int64_t lookups, EmbeddingRows part) {
  const int64_t n = lookups * part.channels;
  for (int64_t i = FirstIndex(); i < n; i += GridStride()) {
    const int32_t id = ids[i / part.channels];
    const int64_t row = LocalRow(id, part);
    if (row >= 0) {
      y[i] = table[row * part.channels + i % part.channels];
    } else {
      y[i] = part.partial && id >= 0 ? 0.0f : nanf("");
    }
  }
}

__global__ void EmbeddingGradKernel(const float* dy, const int32_t* ids, float* dtable,
                                    int64_t lookups, EmbeddingRows part) {
  const int64_t n = part.rows * part.channels;
  for (int64_t e = FirstIndex(); e < n; e += GridStride()) {
    const int64_t row = e / part.channels;
    const int64_t column = e % part.channels;
    const int32_t wanted = static_cast<int32_t>(row + part.first);
    float sum = 0.0f;
    for (int64_t i = 0; i < lookups; ++i) {
      if (__ldg(ids + i) == wanted) sum += dy[i * part.channels + column];
    }
    dtable[e] = sum;
  }
}

}  // namespace

cudaError_t GatherBlock(Word word, const void* x, void* y, const StridedBlock& block,
                        cudaStream_t stream) {
  if (block.count == 0) return cudaSuccess;
  if (word == Word::kFour) {
    GatherBlockKernel<<<Blocks(block.count), kThreads, 0, stream>>>(
        static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y), block);
  } else {
    GatherBlockKernel<<<Blocks(block.count), kThreads, 0, stream>>>(
        static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y), block);
  }
  return cudaGetLastError();
}

cudaError_t AddIntoBlock(AddType type, const void* x, void* y, const StridedBlock& block,
                         cudaStream_t stream) {
  if (block.count == 0) return cudaSuccess;
  const unsigned blocks = Blocks(block.count);
  if (type == AddType::kFloat32) {
    AddFloatsIntoBlockKernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(x),
                                                              static_cast<float*>(y), block);
  } else if (type == AddType::kInt32) {
    AddIntsIntoBlockKernel<<<blocks, kThreads, 0, stream>>>(static_cast<const int32_t*>(x),
                                                            static_cast<int32_t*>(y), block);
  } else {
    AddBFloat16sIntoBlockKernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint16_t*>(x),
                                                                 static_cast<uint16_t*>(y), block);
  }
  return cudaGetLastError();
}

cudaError_t FloatToBFloat16(const float* x, uint16_t* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  FloatToBFloat16Kernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t BFloat16ToFloat(const uint16_t* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  BFloat16ToFloatKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}

cudaError_t EmbeddingLookup(const float* table, const int32_t* ids, float* y, int64_t lookups,
                            const EmbeddingRows& part, cudaStream_t stream) {
  const int64_t n = lookups * part.channels;
  if (n == 0) return cudaSuccess;
  EmbeddingLookupKernel<<<Blocks(n), kThreads, 0, stream>>>(table, ids, y, lookups, part);
  return cudaGetLastError();
}

cudaError_t EmbeddingGrad(const float* dy, const int32_t* ids, float* dtable, int64_t lookups,
                          const EmbeddingRows& part, cudaStream_t stream) {
  const int64_t n = part.rows * part.channels;
  if (n == 0) return cudaSuccess;
  EmbeddingGradKernel<<<Blocks(n), kThreads, 0, stream>>>(dy, ids, dtable, lookups, part);
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace runtime
}  // namespace softwire
