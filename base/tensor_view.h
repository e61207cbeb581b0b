// TensorView: a non-owning view of one dense, row-major tensor in memory.
//
// Kernels receive their inputs and outputs as views into register slots; the memory belongs
// to the device arena (runtime/) or to whoever built the view. Views are cheap to copy.
#ifndef SOFTWIRE_BASE_TENSOR_VIEW_H_
#define SOFTWIRE_BASE_TENSOR_VIEW_H_

#include <glog/logging.h>

#include <cstdint>

#include "base/bfloat16.h"
#include "base/dtype.h"
#include "base/shape.h"

namespace softwire {

struct TensorView {
  DType dtype = DType::kInvalid;
  Shape shape;
  void* data = nullptr;

  int64_t NumElements() const { return shape.NumElements(); }
  int64_t NumBytes() const { return shape.NumElements() * SizeOf(dtype); }

  // Typed access. CHECKs that T matches dtype.
  template <typename T>
  T* As() const {
    CHECK(dtype == DTypeOf<T>()) << "tensor is " << DTypeName(dtype);
    return static_cast<T*>(data);
  }

 private:
  template <typename T>
  static constexpr DType DTypeOf();
};

template <>
constexpr DType TensorView::DTypeOf<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType TensorView::DTypeOf<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType TensorView::DTypeOf<BFloat16>() {
  return DType::kBFloat16;
}

}  // namespace softwire

#endif  // SOFTWIRE_BASE_TENSOR_VIEW_H_
