// BroadcastLayout: how the elements of a broadcast result map onto its operands, built once per
// kernel so that Run only walks integer strides.
//
// The result's axes are merged where every operand agrees on them (each either spans both axes
// or is broadcast along both), and axes of extent 1 are dropped. What remains is a grid of
// rows x inner: the last merged axis is the contiguous inner loop, in which each operand has
// stride 1 (it spans the axis) or 0 (it is broadcast along it).
//
//   BroadcastLayout layout = MakeBroadcastLayout(Shape({8, 5, 3}), {Shape({8, 5, 3}),
//                                                                   Shape({3})});
//   // layout.inner() == 3, layout.rows() == 40, strides {1, 1} in the inner loop.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_BROADCAST_LAYOUT_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_BROADCAST_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "base/shape.h"

namespace softwire {
namespace runtime {

class BroadcastLayout {
 public:
  // The result's element count.
  int64_t elements() const { return elements_; }
  // Length of the contiguous inner loop (>= 1 unless the result is empty).
  int64_t inner() const { return dims_.empty() ? 1 : dims_.back(); }
  // Stride (0 or 1) of `operand` along the inner loop.
  int64_t inner_stride(int operand) const { return dims_.empty() ? 0 : strides_[operand].back(); }
  // Offset of `operand`'s element at the start of result row `row` (row < elements / inner).
  // Costs one division per merged axis.
  int64_t RowOffset(int operand, int64_t row) const;

 private:
  friend BroadcastLayout MakeBroadcastLayout(const Shape& result,
                                             const std::vector<Shape>& operands);

  int64_t elements_ = 0;
  std::vector<int64_t> dims_;                  // Merged result axes, outermost first.
  std::vector<std::vector<int64_t>> strides_;  // Per operand, per merged axis.
};

// True when `operand` broadcasts to `result` under NumPy rules (aligned at the last axis, each
// extent equal to the result's or 1, rank not above the result's).
bool BroadcastsTo(const Shape& operand, const Shape& result);

// NumPy broadcast of `a` and `b`; false when they are incompatible.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* result);

// Requires BroadcastsTo(operand, result) for every operand (CHECKed).
BroadcastLayout MakeBroadcastLayout(const Shape& result, const std::vector<Shape>& operands);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_BROADCAST_LAYOUT_H_
