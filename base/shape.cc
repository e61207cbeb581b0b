#include "base/shape.h"

#include <glog/logging.h>

#include <limits>

namespace softwire {

int64_t Shape::dim(int axis) const {
  int normalized = NormalizeAxis(axis);
  CHECK_GE(normalized, 0) << "axis " << axis << " out of range for shape " << ToString();
  return dims_[normalized];
}

int64_t Shape::NumElements() const {
  return NumElements(0, rank());
}

int64_t Shape::NumElements(int begin, int end) const {
  int64_t count = 1;
  for (int axis = begin; axis < end; ++axis) {
    int64_t product;
    if (__builtin_mul_overflow(count, dims_[axis], &product)) {
      const bool negative = (count < 0) != (dims_[axis] < 0);  // Sign of the true product.
      return negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
    }
    count = product;
  }
  return count;
}

int Shape::NormalizeAxis(int64_t axis) const {
  if (axis < 0) axis += rank();
  if (axis < 0 || axis >= rank()) return -1;
  return static_cast<int>(axis);
}

std::string Shape::ToString() const {
  std::string text = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(dims_[i]);
  }
  return text + "]";
}

}  // namespace softwire
