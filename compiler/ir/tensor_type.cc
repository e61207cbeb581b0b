#include "compiler/ir/tensor_type.h"

#include <vector>

namespace softwire {
namespace compiler {

std::string TensorType::ToString() const {
  if (!known()) return "unknown";
  return std::string(DTypeName(dtype)) + shape.ToString();
}

DType FromProtoDataType(proto::DataType dtype) {
  switch (dtype) {
    case proto::DATA_TYPE_FLOAT32:
      return DType::kFloat32;
    case proto::DATA_TYPE_INT32:
      return DType::kInt32;
    default:
      return DType::kInvalid;
  }
}

proto::DataType ToProtoDataType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return proto::DATA_TYPE_FLOAT32;
    case DType::kInt32:
      return proto::DATA_TYPE_INT32;
    default:
      return proto::DATA_TYPE_UNSPECIFIED;
  }
}

proto::TensorDesc ToTensorDesc(const TensorType& type) {
  proto::TensorDesc desc;
  ToTensorDesc(type, &desc);
  return desc;
}

void ToTensorDesc(const TensorType& type, proto::TensorDesc* desc) {
  desc->set_dtype(ToProtoDataType(type.dtype));
  desc->mutable_dims()->Reserve(type.shape.rank());
  for (int64_t dim : type.shape.dims()) desc->add_dims(dim);
}

TensorType FromTensorDesc(const proto::TensorDesc& desc) {
  TensorType type;
  type.dtype = FromProtoDataType(desc.dtype());
  type.shape = Shape(std::vector<int64_t>(desc.dims().begin(), desc.dims().end()));
  return type;
}

}  // namespace compiler
}  // namespace softwire
