// Shape: the extents of a tensor's axes, outermost first. A scalar has no axes.
#ifndef SOFTWIRE_BASE_SHAPE_H_
#define SOFTWIRE_BASE_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace softwire {

class Shape {
 public:
  Shape() = default;  // Scalar.
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

  int rank() const { return static_cast<int>(dims_.size()); }
  // Extent of `axis`; negative axes count from the end (-1 is the last). CHECKs the range.
  int64_t dim(int axis) const;
  const std::vector<int64_t>& dims() const { return dims_; }

  // Product of the extents; 1 for a scalar. Saturates at INT64_MAX (or INT64_MIN) instead of
  // overflowing, so a shape read from input (a job's dims, an .npy header) can be measured and
  // refused: whoever takes shapes from outside bounds their size (the compiler: at most
  // kMaxTensorBytes per tensor, compiler/ir/tensor_type.h).
  int64_t NumElements() const;

  // Product of extents in [begin, end), saturating likewise.
  int64_t NumElements(int begin, int end) const;

  // Maps a possibly negative axis into [0, rank). Returns -1 when out of range.
  int NormalizeAxis(int64_t axis) const;

  // "[256, 784]"; "[]" for a scalar.
  std::string ToString() const;

  bool operator==(const Shape& other) const { return dims_ == other.dims_; }
  bool operator!=(const Shape& other) const { return dims_ != other.dims_; }

 private:
  std::vector<int64_t> dims_;
};

}  // namespace softwire

#endif  // SOFTWIRE_BASE_SHAPE_H_
