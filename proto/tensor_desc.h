// The plan's tensor descriptions (proto/tensor.proto) as base's DType and Shape, and back: one
// mapping for the compiler, the data sources, the runtime and the reference interpreter.
//
//   DType dtype = DTypeOf(desc);   // kInvalid for a data type softwire has no kernels for.
//   Shape shape = ShapeOf(desc);
//   proto::TensorDesc same = TensorDescOf(dtype, shape);
#ifndef SOFTWIRE_PROTO_TENSOR_DESC_H_
#define SOFTWIRE_PROTO_TENSOR_DESC_H_

#include "base/dtype.h"
#include "base/layout.h"
#include "base/shape.h"
#include "proto/tensor.pb.h"

namespace softwire {

// kInvalid for DATA_TYPE_UNSPECIFIED and any type without kernels.
DType DTypeOf(proto::DataType dtype);
DType DTypeOf(const proto::TensorDesc& desc);
// The dims as given (not checked: a negative extent stays negative).
Shape ShapeOf(const proto::TensorDesc& desc);
// kPlain for a layout softwire does not know.
Layout LayoutOf(const proto::TensorDesc& desc);
proto::Layout ProtoLayoutOf(Layout layout);

// DATA_TYPE_UNSPECIFIED for kInvalid.
proto::DataType ProtoDataTypeOf(DType dtype);
proto::TensorDesc TensorDescOf(DType dtype, const Shape& shape);

}  // namespace softwire

#endif  // SOFTWIRE_PROTO_TENSOR_DESC_H_
