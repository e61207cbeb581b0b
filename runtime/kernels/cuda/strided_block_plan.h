// How a cuda kernel walks a block of a larger row-major tensor (cuda::StridedBlock,
// layout_launchers.h): planned once, when the kernel is made, for transpose (the output walked
// with the input's strides permuted), slice (the block read out of x) and assemble (each input
// written into y). Host code only, tested without a GPU (strided_block_plan_test.cc).
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_STRIDED_BLOCK_PLAN_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_STRIDED_BLOCK_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/tensor_desc.h"
#include "runtime/kernels/cuda/layout_launchers.h"

namespace softwire {
namespace runtime {

// The row-major strides of `dims`, in elements.
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

// The block of extents `dims` whose element (i0, i1, ...) is at base + i0 * strides[0] + ... in
// the larger tensor. Axes of extent 1 are dropped and an axis is merged into the one before it
// where that one steps exactly over it (fewer divisions per element on the device); the walk is
// unchanged. Unimplemented, naming `op`, when more than cuda::kMaxRank axes remain.
StatusOr<cuda::StridedBlock> PlanStridedBlock(const std::string& op,
                                              const std::vector<int64_t>& dims,
                                              const std::vector<int64_t>& strides, int64_t base);

// transpose of x by `perm` (y.shape[i] = x.shape[perm[i]]): y walked in x.
StatusOr<cuda::StridedBlock> PlanTranspose(const Shape& x, const std::vector<int64_t>& perm);
// slice: x[begin:end] on every axis, walked in x.
StatusOr<cuda::StridedBlock> PlanSlice(const Shape& x, const std::vector<int64_t>& begin,
                                       const std::vector<int64_t>& end);
// assemble's input `block` placed at `offsets` in y, walked in y.
StatusOr<cuda::StridedBlock> PlanBlockIn(const Shape& y, const Shape& block,
                                         const std::vector<int64_t>& offsets);

// Where element `index` (row-major over the block) lies in the larger tensor: what the device
// code computes per element.
int64_t StridedBlockOffset(const cuda::StridedBlock& block, int64_t index);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_STRIDED_BLOCK_PLAN_H_
