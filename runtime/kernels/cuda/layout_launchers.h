// The device functions of the cuda kernels that move data rather than compute it: strided
// copies (transpose, slice), assemble's block adds, casts between float32 and bfloat16, and
// embedding lookups and their gradient. Plain C++ declarations like cuda_launchers.h (only
// layout_launchers.cu goes through nvcc); each launcher enqueues its work on `stream` and returns
// cudaGetLastError().
//
// Every launcher computes each element the way the cpu kernel does, so results are bit for bit
// the cpu's: copies move words, assemble adds its inputs in input order (one launch per input,
// in stream order), bfloat16 rounds to nearest even with base/bfloat16.h's formula, and
// embedding_grad sums each table element's terms in id order (a thread per table element: no
// atomics, the same sum every run).
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_LAYOUT_LAUNCHERS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_LAYOUT_LAUNCHERS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "runtime/kernels/cuda/cuda_launchers.h"

namespace softwire {
namespace runtime {
namespace cuda {

// A block of a larger row-major tensor walked in the block's row-major order: element i of the
// block is at `base` + sum over axes of coordinate * stride in the larger tensor (strides in
// elements; a transpose's strides are its input's, permuted).
struct StridedBlock {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t base = 0;
  int64_t count = 0;  // Product of dims.
};

// The element types data moves in: 4-byte words (float32, int32) or 2-byte ones (bfloat16).
enum class Word { kFour, kTwo };
// What assemble adds in.
enum class AddType { kFloat32, kInt32, kBFloat16 };

// y[i] = x[block's offset of i]: the packed block out of x.
cudaError_t GatherBlock(Word word, const void* x, void* y, const StridedBlock& block,
                        cudaStream_t stream);
// y[block's offset of i] += x[i], in `type` (bfloat16 adds in float32 and rounds once).
cudaError_t AddIntoBlock(AddType type, const void* x, void* y, const StridedBlock& block,
                         cudaStream_t stream);
cudaError_t FloatToBFloat16(const float* x, uint16_t* y, int64_t n, cudaStream_t stream);
cudaError_t BFloat16ToFloat(const uint16_t* x, float* y, int64_t n, cudaStream_t stream);

// The table rows a part holds: id i reads local row i - first when that is in [0, rows).
// Another id writes a zero row with `partial` (another part holds it) and a NaN row without
// (the cpu kernel fails the firing on it; a cuda kernel cannot, docs/CUDA.md).
struct EmbeddingRows {
  int64_t rows = 0;      // V of this part.
  int64_t channels = 0;  // C.
  int64_t first = 0;     // index_begin.
  bool partial = false;
};
cudaError_t EmbeddingLookup(const float* table, const int32_t* ids, float* y, int64_t lookups,
                            const EmbeddingRows& part, cudaStream_t stream);
// dtable[r, c] = 0 + dy[i0, c] + dy[i1, c] + ... over the lookups i with ids[i] - first == r,
// in increasing i: a thread per table element (rows x channels), each reading every id. Its
// cost grows with rows x lookups: right for byte and small vocabularies; a large one wants ids
// sorted first (docs/CUDA.md).
cudaError_t EmbeddingGrad(const float* dy, const int32_t* ids, float* dtable, int64_t lookups,
                          const EmbeddingRows& part, cudaStream_t stream);

}  // namespace cuda
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_LAYOUT_LAUNCHERS_H_
