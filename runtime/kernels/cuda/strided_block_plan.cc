#include "runtime/kernels/cuda/strided_block_plan.h"

namespace softwire {
namespace runtime {

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int axis = static_cast<int>(dims.size()) - 2; axis >= 0; --axis) {
    strides[axis] = strides[axis + 1] * dims[axis + 1];
  }
  return strides;
}

StatusOr<cuda::StridedBlock> PlanStridedBlock(const std::string& op,
                                              const std::vector<int64_t>& dims,
                                              const std::vector<int64_t>& strides, int64_t base) {
  std::vector<int64_t> merged_dims;
  std::vector<int64_t> merged_strides;
  int64_t count = 1;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    count *= dims[axis];
    if (dims[axis] == 1) continue;
    if (!merged_dims.empty() && merged_strides.back() == dims[axis] * strides[axis]) {
      merged_dims.back() *= dims[axis];
      merged_strides.back() = strides[axis];
    } else {
      merged_dims.push_back(dims[axis]);
      merged_strides.push_back(strides[axis]);
    }
  }
  if (merged_dims.size() > static_cast<size_t>(cuda::kMaxRank)) {
    return UnimplementedError(op + ": cuda kernels walk blocks of up to " +
                              std::to_string(cuda::kMaxRank) + " merged axes, not " +
                              std::to_string(merged_dims.size()));
  }
  cuda::StridedBlock block;
  block.rank = static_cast<int>(merged_dims.size());
  for (int axis = 0; axis < block.rank; ++axis) {
    block.dims[axis] = merged_dims[static_cast<size_t>(axis)];
    block.strides[axis] = merged_strides[static_cast<size_t>(axis)];
  }
  block.base = base;
  block.count = count;
  return block;
}

StatusOr<cuda::StridedBlock> PlanTranspose(const Shape& x, const std::vector<int64_t>& perm) {
  const std::vector<int64_t> x_strides = RowMajorStrides(x.dims());
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  for (int64_t axis : perm) {
    dims.push_back(x.dim(static_cast<int>(axis)));
    strides.push_back(x_strides[static_cast<size_t>(axis)]);
  }
  return PlanStridedBlock("transpose", dims, strides, 0);
}

StatusOr<cuda::StridedBlock> PlanSlice(const Shape& x, const std::vector<int64_t>& begin,
                                       const std::vector<int64_t>& end) {
  const std::vector<int64_t> strides = RowMajorStrides(x.dims());
  std::vector<int64_t> dims;
  int64_t base = 0;
  for (int axis = 0; axis < x.rank(); ++axis) {
    dims.push_back(end[axis] - begin[axis]);
    base += begin[axis] * strides[axis];
  }
  return PlanStridedBlock("slice", dims, strides, base);
}

StatusOr<cuda::StridedBlock> PlanBlockIn(const Shape& y, const Shape& block,
                                         const std::vector<int64_t>& offsets) {
  const std::vector<int64_t> strides = RowMajorStrides(y.dims());
  int64_t base = 0;
  for (int axis = 0; axis < y.rank(); ++axis) base += offsets[axis] * strides[axis];
  return PlanStridedBlock("assemble", block.dims(), strides, base);
}

int64_t StridedBlockOffset(const cuda::StridedBlock& block, int64_t index) {
  int64_t offset = block.base;
  for (int axis = block.rank - 1; axis >= 0; --axis) {
    offset += (index % block.dims[axis]) * block.strides[axis];
    index /= block.dims[axis];
  }
  return offset;
}

}  // namespace runtime
}  // namespace softwire
