#include "proto/tensor_desc.h"

#include <vector>

namespace softwire {

DType DTypeOf(proto::DataType dtype) {
  switch (dtype) {
    case proto::DATA_TYPE_FLOAT32:
      return DType::kFloat32;
    case proto::DATA_TYPE_INT32:
      return DType::kInt32;
    case proto::DATA_TYPE_BFLOAT16:
      return DType::kBFloat16;
    default:
      return DType::kInvalid;
  }
}

DType DTypeOf(const proto::TensorDesc& desc) {
  return DTypeOf(desc.dtype());
}

Shape ShapeOf(const proto::TensorDesc& desc) {
  return Shape(std::vector<int64_t>(desc.dims().begin(), desc.dims().end()));
}

Layout LayoutOf(const proto::TensorDesc& desc) {
  switch (desc.layout()) {
    case proto::LAYOUT_NHWC:
      return Layout::kNhwc;
    case proto::LAYOUT_NCHW16C:
      return Layout::kNChw16c;
    default:
      return Layout::kPlain;
  }
}

proto::Layout ProtoLayoutOf(Layout layout) {
  switch (layout) {
    case Layout::kNhwc:
      return proto::LAYOUT_NHWC;
    case Layout::kNChw16c:
      return proto::LAYOUT_NCHW16C;
    default:
      return proto::LAYOUT_PLAIN;
  }
}

proto::DataType ProtoDataTypeOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return proto::DATA_TYPE_FLOAT32;
    case DType::kInt32:
      return proto::DATA_TYPE_INT32;
    case DType::kBFloat16:
      return proto::DATA_TYPE_BFLOAT16;
    default:
      return proto::DATA_TYPE_UNSPECIFIED;
  }
}

proto::TensorDesc TensorDescOf(DType dtype, const Shape& shape) {
  proto::TensorDesc desc;
  desc.set_dtype(ProtoDataTypeOf(dtype));
  desc.mutable_dims()->Reserve(shape.rank());
  for (int64_t extent : shape.dims()) desc.add_dims(extent);
  return desc;
}

}  // namespace softwire
