// TensorType: the element type and shape of one tensor as the compiler sees it, and its
// conversions to and from proto::TensorDesc.
#ifndef SOFTWIRE_COMPILER_IR_TENSOR_TYPE_H_
#define SOFTWIRE_COMPILER_IR_TENSOR_TYPE_H_

#include <cstdint>
#include <string>

#include "base/dtype.h"
#include "base/layout.h"
#include "base/shape.h"
#include "proto/tensor.pb.h"

namespace softwire {
namespace compiler {

// The most bytes one tensor of a job may hold: 1 TiB, beyond any device's memory, and small
// enough that a plan's sums of bytes (registers, slots, arenas) cannot overflow int64.
// infer_shapes refuses a larger tensor, naming the op that makes it (a source's micro-batch
// times its sample_dims, a variable's dims, an op's attributes).
constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;

// A value type. `dtype == kInvalid` means "not inferred yet". `layout` is where the elements
// lie (base/layout.h): plain until choose_layouts picks another for an image batch.
struct TensorType {
  DType dtype = DType::kInvalid;
  Shape shape;
  Layout layout = Layout::kPlain;

  bool known() const { return dtype != DType::kInvalid; }
  int64_t NumElements() const { return shape.NumElements(); }
  // Saturates at INT64_MAX, as Shape::NumElements does.
  int64_t NumBytes() const;

  // "float32[8, 784]", "int32[]", "float32[8, 16, 4, 4] nChw16c", or "unknown".
  std::string ToString() const;

  bool operator==(const TensorType& other) const {
    return dtype == other.dtype && shape == other.shape && layout == other.layout;
  }
  bool operator!=(const TensorType& other) const { return !(*this == other); }
};

proto::TensorDesc ToTensorDesc(const TensorType& type);
// The same, written into `desc`.
void ToTensorDesc(const TensorType& type, proto::TensorDesc* desc);
TensorType FromTensorDesc(const proto::TensorDesc& desc);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_IR_TENSOR_TYPE_H_
