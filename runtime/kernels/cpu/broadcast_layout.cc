#include "runtime/kernels/cpu/broadcast_layout.h"

#include <glog/logging.h>

namespace softwire {
namespace runtime {
namespace {

// Extent of `shape` on result axis `axis` of a result of rank `rank` (1 for padded axes).
int64_t AlignedDim(const Shape& shape, int rank, int axis) {
  int operand_axis = axis - (rank - shape.rank());
  return operand_axis < 0 ? 1 : shape.dim(operand_axis);
}

}  // namespace

bool BroadcastsTo(const Shape& operand, const Shape& result) {
  if (operand.rank() > result.rank()) return false;
  for (int axis = 0; axis < result.rank(); ++axis) {
    int64_t extent = AlignedDim(operand, result.rank(), axis);
    if (extent != result.dim(axis) && extent != 1) return false;
  }
  return true;
}

bool BroadcastShapes(const Shape& a, const Shape& b, Shape* result) {
  int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int axis = 0; axis < rank; ++axis) {
    int64_t a_extent = AlignedDim(a, rank, axis);
    int64_t b_extent = AlignedDim(b, rank, axis);
    if (a_extent != b_extent && a_extent != 1 && b_extent != 1) return false;
    dims[axis] = a_extent == 1 ? b_extent : a_extent;
  }
  *result = Shape(std::move(dims));
  return true;
}

BroadcastLayout MakeBroadcastLayout(const Shape& result, const std::vector<Shape>& operands) {
  BroadcastLayout layout;
  layout.elements_ = result.NumElements();
  layout.strides_.resize(operands.size());
  const int rank = result.rank();
  // spans[o][i]: operand o spans merged axis i (else it is broadcast along it).
  std::vector<std::vector<bool>> spans(operands.size());
  for (int axis = 0; axis < rank; ++axis) {
    int64_t extent = result.dim(axis);
    if (extent == 1) continue;
    std::vector<bool> axis_spans;
    for (const Shape& operand : operands) {
      CHECK(BroadcastsTo(operand, result))
          << operand.ToString() << " does not broadcast to " << result.ToString();
      axis_spans.push_back(AlignedDim(operand, rank, axis) == extent);
    }
    bool merges = !layout.dims_.empty();
    for (size_t o = 0; o < operands.size() && merges; ++o) {
      merges = spans[o].back() == axis_spans[o];
    }
    if (merges) {
      layout.dims_.back() *= extent;
    } else {
      layout.dims_.push_back(extent);
      for (size_t o = 0; o < operands.size(); ++o) spans[o].push_back(axis_spans[o]);
    }
  }
  for (size_t o = 0; o < operands.size(); ++o) {
    std::vector<int64_t>& strides = layout.strides_[o];
    strides.assign(layout.dims_.size(), 0);
    int64_t stride = 1;
    for (int axis = static_cast<int>(layout.dims_.size()) - 1; axis >= 0; --axis) {
      if (spans[o][axis]) {
        strides[axis] = stride;
        stride *= layout.dims_[axis];
      }
    }
  }
  return layout;
}

int64_t BroadcastLayout::RowOffset(int operand, int64_t row) const {
  const std::vector<int64_t>& strides = strides_[operand];
  int64_t offset = 0;
  for (int axis = static_cast<int>(dims_.size()) - 2; axis >= 0 && row > 0; --axis) {
    offset += (row % dims_[axis]) * strides[axis];
    row /= dims_[axis];
  }
  return offset;
}

}  // namespace runtime
}  // namespace softwire
