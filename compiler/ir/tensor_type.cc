#include "compiler/ir/tensor_type.h"

#include <limits>
#include <vector>

#include "proto/tensor_desc.h"

namespace softwire {
namespace compiler {

int64_t TensorType::NumBytes() const {
  int64_t bytes;
  if (__builtin_mul_overflow(shape.NumElements(), int64_t{SizeOf(dtype)}, &bytes)) {
    return std::numeric_limits<int64_t>::max();
  }
  return bytes;
}

std::string TensorType::ToString() const {
  if (!known()) return "unknown";
  std::string text = std::string(DTypeName(dtype)) + shape.ToString();
  if (layout != Layout::kPlain) text += std::string(" ") + LayoutName(layout);
  return text;
}

proto::TensorDesc ToTensorDesc(const TensorType& type) {
  proto::TensorDesc desc;
  ToTensorDesc(type, &desc);
  return desc;
}

void ToTensorDesc(const TensorType& type, proto::TensorDesc* desc) {
  desc->set_dtype(ProtoDataTypeOf(type.dtype));
  desc->mutable_dims()->Reserve(type.shape.rank());
  for (int64_t dim : type.shape.dims()) desc->add_dims(dim);
  if (type.layout != Layout::kPlain) desc->set_layout(ProtoLayoutOf(type.layout));
}

TensorType FromTensorDesc(const proto::TensorDesc& desc) {
  TensorType type;
  type.dtype = DTypeOf(desc.dtype());
  type.shape = Shape(std::vector<int64_t>(desc.dims().begin(), desc.dims().end()));
  type.layout = LayoutOf(desc);
  return type;
}

}  // namespace compiler
}  // namespace softwire
