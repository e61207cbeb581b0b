// Tensor descriptions and base's DType and Shape: the mapping both ways, and what has no
// kernels maps to kInvalid / DATA_TYPE_UNSPECIFIED.
#include "proto/tensor_desc.h"

#include <gtest/gtest.h>

namespace softwire {
namespace {

TEST(TensorDescTest, DescriptionsRoundTrip) {
  for (DType dtype : {DType::kFloat32, DType::kInt32}) {
    const proto::TensorDesc desc = TensorDescOf(dtype, Shape({8, 0, 3}));
    EXPECT_EQ(DTypeOf(desc), dtype);
    EXPECT_EQ(ShapeOf(desc), Shape({8, 0, 3}));
    EXPECT_EQ(DTypeOf(ProtoDataTypeOf(dtype)), dtype);
  }
  const proto::TensorDesc scalar = TensorDescOf(DType::kFloat32, Shape({}));
  EXPECT_EQ(scalar.dims_size(), 0);
  EXPECT_EQ(ShapeOf(scalar).rank(), 0);
}

TEST(TensorDescTest, TypesWithoutKernelsAreInvalid) {
  EXPECT_EQ(DTypeOf(proto::DATA_TYPE_UNSPECIFIED), DType::kInvalid);
  EXPECT_EQ(DTypeOf(static_cast<proto::DataType>(1000)), DType::kInvalid);
  EXPECT_EQ(ProtoDataTypeOf(DType::kInvalid), proto::DATA_TYPE_UNSPECIFIED);
  proto::TensorDesc desc;
  desc.add_dims(-1);
  EXPECT_EQ(DTypeOf(desc), DType::kInvalid);
  EXPECT_EQ(ShapeOf(desc).dims()[0], -1) << "ShapeOf keeps what it is given";
}

}  // namespace
}  // namespace softwire
