// The gradient ops of conv2d, batch_norm and the pools checked against central finite
// differences of their reference forward ops, on odd shapes (strides, padding, dilation,
// groups, batch 1, non-square images). Tolerance as in reference_gradient_test.cc: 1e-6
// relative plus 1e-6 absolute, four orders above the differences' truncation and rounding.
#include <gtest/gtest.h>

#include "reference/kernels/testing/finite_differences.h"

namespace softwire {
namespace reference {
namespace {

// Expects `analytic` to be d/d inputs[wrt] of sum(weights * op(inputs)[0]), op's output 0 of
// `y_shape`.
void ExpectGradient(const std::string& op_type, const std::vector<proto::Attribute>& attributes,
                    const std::vector<ReferenceTensor>& inputs, const Shape& y_shape, size_t wrt,
                    const std::vector<double>& weights, const ReferenceTensor& analytic) {
  ExpectGradient(Forward{op_type, attributes, {y_shape}}, inputs, wrt, weights, analytic);
}

struct ConvolutionCase {
  Shape x;
  Shape w;
  Shape y;
  std::vector<int64_t> strides;
  std::vector<int64_t> padding;
  std::vector<int64_t> dilation;
  int64_t groups;
};

TEST(ReferenceConvolutionGradients, GradInputGradFilterAndBiasAreTheDerivativesOfConv2d) {
  const std::vector<ConvolutionCase> cases = {
      // Stride 2 with padding on a non-square image; output 3 x 2 (PyTorch's formula).
      {Shape({2, 3, 5, 4}), Shape({4, 3, 3, 2}), Shape({2, 4, 3, 2}), {2, 2}, {1, 0}, {1, 1}, 1},
      // Groups 2, dilation 2, batch 1.
      {Shape({1, 4, 6, 7}), Shape({2, 2, 2, 3}), Shape({1, 2, 4, 3}), {1, 1}, {0, 0}, {2, 2}, 2},
      // Depthwise (groups = channels) with asymmetric strides.
      {Shape({2, 3, 4, 5}), Shape({3, 1, 3, 3}), Shape({2, 3, 4, 2}), {1, 3}, {1, 1}, {1, 1}, 3},
  };
  uint64_t seed = 100;
  for (const ConvolutionCase& c : cases) {
    SCOPED_TRACE("x " + c.x.ToString() + " w " + c.w.ToString());
    std::vector<proto::Attribute> attributes = {
        IntsAttribute("strides", c.strides), IntsAttribute("padding", c.padding),
        IntsAttribute("dilation", c.dilation), IntAttribute("groups", c.groups)};
    ReferenceTensor x = RandomTensor(c.x, ++seed);
    ReferenceTensor w = RandomTensor(c.w, ++seed);
    ReferenceTensor bias = RandomTensor(Shape({c.w.dim(0)}), ++seed);
    std::vector<double> weights = Normals(c.y.NumElements(), ++seed);
    ReferenceTensor dy = FloatTensor(c.y, weights);
    std::vector<proto::Attribute> input_attributes = attributes;
    input_attributes.push_back(IntsAttribute("shape", c.x.dims()));
    std::vector<proto::Attribute> filter_attributes = attributes;
    filter_attributes.push_back(IntsAttribute("shape", c.w.dims()));
    ReferenceTensor dx = Apply("conv2d_grad_input", input_attributes, {dy, w}, {c.x})[0];
    ReferenceTensor dw = Apply("conv2d_grad_filter", filter_attributes, {dy, x}, {c.w})[0];
    ReferenceTensor dbias =
        Apply("reduce_sum", {IntsAttribute("axes", {0, 2, 3})}, {dy}, {Shape({c.w.dim(0)})})[0];
    ExpectGradient("conv2d", attributes, {x, w, bias}, c.y, 0, weights, dx);
    ExpectGradient("conv2d", attributes, {x, w, bias}, c.y, 1, weights, dw);
    ExpectGradient("conv2d", attributes, {x, w, bias}, c.y, 2, weights, dbias);
  }
}

TEST(ReferenceConvolutionGradients, BatchNormGradGivesTheDerivativesForXGammaAndBeta) {
  for (const Shape& shape : {Shape({3, 2, 3, 5}), Shape({1, 3, 2, 2}), Shape({4, 3})}) {
    SCOPED_TRACE(shape.ToString());
    const Shape channels({shape.dim(1)});
    std::vector<proto::Attribute> attributes = {FloatAttribute("epsilon", 1e-3)};
    ReferenceTensor x = RandomTensor(shape, 200);
    ReferenceTensor gamma = RandomTensor(channels, 201);
    ReferenceTensor beta = RandomTensor(channels, 202);
    std::vector<double> w = Normals(shape.NumElements(), 203);
    std::vector<ReferenceTensor> grads =
        Apply("batch_norm_grad", attributes, {FloatTensor(shape, w), x, gamma},
              {shape, channels, channels});
    for (size_t wrt = 0; wrt < 3; ++wrt) {
      ExpectGradient("batch_norm", attributes, {x, gamma, beta}, shape, wrt, w, grads[wrt]);
    }
  }
}

TEST(ReferenceConvolutionGradients, PoolGradientsAreTheDerivativesOfThePools) {
  struct Case {
    Shape x;
    Shape y;
    std::vector<int64_t> kernel;
    std::vector<int64_t> strides;
    std::vector<int64_t> padding;
  };
  for (const Case& c : {Case{Shape({2, 3, 5, 6}), Shape({2, 3, 2, 3}), {2, 2}, {}, {0, 0}},
                        Case{Shape({1, 2, 5, 4}), Shape({1, 2, 3, 2}), {3, 3}, {2, 2}, {1, 1}},
                        Case{Shape({2, 1, 4, 7}), Shape({2, 1, 2, 3}), {3, 2}, {1, 3}, {0, 1}}}) {
    SCOPED_TRACE(c.x.ToString());
    std::vector<proto::Attribute> attributes = {IntsAttribute("kernel", c.kernel),
                                                IntsAttribute("strides", c.strides),
                                                IntsAttribute("padding", c.padding)};
    ReferenceTensor x = RandomTensor(c.x, 300);  // Distinct values: no ties at the maxima.
    std::vector<double> w = Normals(c.y.NumElements(), 301);
    ReferenceTensor dy = FloatTensor(c.y, w);
    ReferenceTensor max_dx = Apply("max_pool2d_grad", attributes, {dy, x}, {c.x})[0];
    ExpectGradient("max_pool2d", attributes, {x}, c.y, 0, w, max_dx);
    std::vector<proto::Attribute> grad_attributes = attributes;
    grad_attributes.push_back(IntsAttribute("shape", c.x.dims()));
    ReferenceTensor avg_dx = Apply("avg_pool2d_grad", grad_attributes, {dy}, {c.x})[0];
    ExpectGradient("avg_pool2d", attributes, {x}, c.y, 0, w, avg_dx);
  }
  const Shape x_shape({2, 3, 4, 5});
  const Shape y_shape({2, 3});
  ReferenceTensor x = RandomTensor(x_shape, 302);
  std::vector<double> w = Normals(6, 303);
  ReferenceTensor dx = Apply("global_avg_pool_grad", {IntsAttribute("shape", x_shape.dims())},
                             {FloatTensor(y_shape, w)}, {x_shape})[0];
  ExpectGradient("global_avg_pool", {}, {x}, y_shape, 0, w, dx);
}

TEST(ReferenceConvolutionGradients, ConvolutionOfOnesCountsTheTapsInsideThePaddedImage) {
  // 1 x 1 x 3 x 3 of ones, 3 x 3 filter of ones, padding 1: corners see 4 taps, edges 6,
  // the centre 9.
  ReferenceTensor x = FloatTensor(Shape({1, 1, 3, 3}), std::vector<double>(9, 1.0));
  ReferenceTensor w = FloatTensor(Shape({1, 1, 3, 3}), std::vector<double>(9, 1.0));
  ReferenceTensor y =
      Apply("conv2d", {IntsAttribute("padding", {1, 1})}, {x, w}, {Shape({1, 1, 3, 3})})[0];
  EXPECT_EQ(y.values, (std::vector<double>{4, 6, 4, 6, 9, 6, 4, 6, 4}));
  ReferenceTensor pooled = Apply("avg_pool2d",
                                 {IntsAttribute("kernel", {3, 3}), IntsAttribute("strides", {1, 1}),
                                  IntsAttribute("padding", {1, 1})},
                                 {x}, {Shape({1, 1, 3, 3})})[0];
  EXPECT_DOUBLE_EQ(pooled.values[0], 4.0 / 9);  // Padding counts in the divisor.
}

}  // namespace
}  // namespace reference
}  // namespace softwire
