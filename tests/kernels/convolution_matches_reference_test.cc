// conv2d (and its two gradients), the pools, global_avg_pool, flatten and batch_norm on the cpu
// (oneDNN for the convolutions) against the double reference, on odd shapes: strides, padding,
// dilation, groups, batch 1, non-square images.
//
// Tolerances, with u = 2^-24:
// - convolutions: each output is a sum of K products (K = C / groups * KH * KW for y and dw's
//   sums run over N * OH * OW, dx's over O / groups * KH * KW): SumTolerance(K) against
//   sum |terms|, whatever order oneDNN adds in. bfloat16 inputs are exact in float32, so the
//   same bound holds for the bf16 products.
// - max pooling and flatten copy values: exact. Average pools sum at most KH * KW terms and
//   scale: SumTolerance(taps) plus a rounding.
// - batch_norm: statistics in double, then a few float32 roundings of values |xhat gamma| < 20:
//   absolute 20 * 8u. batch_norm_grad: dx adds two double sums rounded to float (8u each
//   against |gamma| |dy| ~ 20), absolute 20 * 16u; dgamma sums count = N * H * W terms dy xhat
//   whose xhat carries a float32 rounding each (|dy xhat| < 4 here): absolute 4u * count, plus
//   relative 2u for the final rounding (dbeta alike).
#include <gtest/gtest.h>

#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

using runtime::HostTensor;

struct ConvolutionCase {
  Shape x;
  Shape w;
  std::vector<int64_t> strides;
  std::vector<int64_t> padding;
  std::vector<int64_t> dilation;
  int64_t groups;
  Shape y;
};

std::vector<ConvolutionCase> ConvolutionCases() {
  return {
      {Shape({2, 3, 5, 4}), Shape({4, 3, 3, 2}), {2, 2}, {1, 0}, {1, 1}, 1, Shape({2, 4, 3, 2})},
      {Shape({1, 4, 6, 7}), Shape({2, 2, 2, 3}), {1, 1}, {0, 0}, {2, 2}, 2, Shape({1, 2, 4, 3})},
      {Shape({3, 3, 4, 5}), Shape({3, 1, 3, 3}), {1, 3}, {1, 1}, {1, 1}, 3, Shape({3, 3, 4, 2})},
      // A ResNet-like layer, large enough to use several lanes.
      {Shape({8, 16, 12, 12}),
       Shape({32, 16, 3, 3}),
       {1, 1},
       {1, 1},
       {1, 1},
       1,
       Shape({8, 32, 12, 12})},
  };
}

std::vector<proto::Attribute> ConvolutionAttributes(const ConvolutionCase& c) {
  return {IntsAttribute("strides", c.strides), IntsAttribute("padding", c.padding),
          IntsAttribute("dilation", c.dilation), IntAttribute("groups", c.groups)};
}

void ExpectConvolutionsMatchTheReference(bool bf16) {
  uint64_t seed = 10;
  auto random = [&](const Shape& shape) {
    return bf16 ? RandomBFloat16s(shape, ++seed) : RandomFloats(shape, ++seed);
  };
  for (const ConvolutionCase& c : ConvolutionCases()) {
    SCOPED_TRACE("x " + c.x.ToString() + " w " + c.w.ToString() + (bf16 ? " bf16" : ""));
    const int64_t taps = c.w.NumElements() / c.w.dim(0);
    std::vector<proto::Attribute> attributes = ConvolutionAttributes(c);
    HostTensor x = random(c.x), w = random(c.w), dy = random(c.y);
    ExpectCpuMatchesReferenceOnEveryRunner({"conv2d", attributes, {x, w}, {c.y}},
                                           SumTolerance(taps));
    if (!bf16) {
      ExpectCpuMatchesReferenceOnEveryRunner(
          {"conv2d", attributes, {x, w, RandomFloats(Shape({c.w.dim(0)}), ++seed)}, {c.y}},
          SumTolerance(taps + 1));
    }
    std::vector<proto::Attribute> input_attributes = attributes;
    input_attributes.push_back(IntsAttribute("shape", c.x.dims()));
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"conv2d_grad_input", input_attributes, {dy, w}, {c.x}},
        SumTolerance(c.w.dim(0) / c.groups * c.w.dim(2) * c.w.dim(3)));
    std::vector<proto::Attribute> filter_attributes = attributes;
    filter_attributes.push_back(IntsAttribute("shape", c.w.dims()));
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"conv2d_grad_filter", filter_attributes, {dy, x}, {c.w}},
        SumTolerance(c.y.dim(0) * c.y.dim(2) * c.y.dim(3)));
  }
}

TEST(ConvolutionKernels, Conv2dAndItsGradientsMatchTheReferenceInFloat32) {
  ExpectConvolutionsMatchTheReference(false);
}

TEST(ConvolutionKernels, Conv2dAndItsGradientsMatchTheReferenceInBFloat16) {
  ExpectConvolutionsMatchTheReference(true);
}

TEST(PoolingKernels, PoolsTheirGradientsAndFlattenMatchTheReference) {
  struct Case {
    Shape x;
    Shape y;
    std::vector<int64_t> kernel;
    std::vector<int64_t> strides;
    std::vector<int64_t> padding;
  };
  uint64_t seed = 50;
  for (const Case& c : {Case{Shape({2, 3, 5, 6}), Shape({2, 3, 2, 3}), {2, 2}, {}, {0, 0}},
                        Case{Shape({1, 2, 5, 4}), Shape({1, 2, 3, 2}), {3, 3}, {2, 2}, {1, 1}},
                        Case{Shape({2, 1, 4, 7}), Shape({2, 1, 2, 3}), {3, 2}, {1, 3}, {0, 1}},
                        Case{Shape({8, 16, 32, 32}), Shape({8, 16, 16, 16}), {2, 2}, {}, {0, 0}}}) {
    SCOPED_TRACE(c.x.ToString());
    const int64_t taps = c.kernel[0] * c.kernel[1];
    std::vector<proto::Attribute> attributes = {IntsAttribute("kernel", c.kernel),
                                                IntsAttribute("strides", c.strides),
                                                IntsAttribute("padding", c.padding)};
    HostTensor x = RandomFloats(c.x, ++seed), dy = RandomFloats(c.y, ++seed);
    ExpectCpuMatchesReferenceOnEveryRunner({"max_pool2d", attributes, {x}, {c.y}}, {0, 0, 0});
    ExpectCpuMatchesReferenceOnEveryRunner({"max_pool2d_grad", attributes, {dy, x}, {c.x}},
                                           SumTolerance(taps));
    ExpectCpuMatchesReferenceOnEveryRunner({"avg_pool2d", attributes, {x}, {c.y}},
                                           SumTolerance(taps + 1));
    std::vector<proto::Attribute> grad_attributes = attributes;
    grad_attributes.push_back(IntsAttribute("shape", c.x.dims()));
    ExpectCpuMatchesReferenceOnEveryRunner({"avg_pool2d_grad", grad_attributes, {dy}, {c.x}},
                                           SumTolerance(taps + 1));
    const Shape pooled({c.x.dim(0), c.x.dim(1)});
    const int64_t plane = c.x.dim(2) * c.x.dim(3);
    ExpectCpuMatchesReferenceOnEveryRunner({"global_avg_pool", {}, {x}, {pooled}},
                                           SumTolerance(plane + 1));
    ExpectCpuMatchesReferenceOnEveryRunner({"global_avg_pool_grad",
                                            {IntsAttribute("shape", c.x.dims())},
                                            {RandomFloats(pooled, ++seed)},
                                            {c.x}},
                                           kRounding);
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"flatten", {}, {x}, {Shape({c.x.dim(0), c.x.NumElements(1, 4)})}}, {0, 0, 0});
  }
}

TEST(BatchNormKernels, BatchNormAndItsGradientMatchTheReference) {
  uint64_t seed = 80;
  for (const Shape& shape :
       {Shape({3, 2, 3, 5}), Shape({1, 3, 2, 2}), Shape({16, 5}), Shape({8, 32, 16, 16})}) {
    SCOPED_TRACE(shape.ToString());
    const Shape channels({shape.dim(1)});
    std::vector<proto::Attribute> attributes = {FloatAttribute("epsilon", 1e-5)};
    HostTensor x = RandomFloats(shape, ++seed);
    HostTensor gamma = RandomFloats(channels, ++seed), beta = RandomFloats(channels, ++seed);
    ExpectCpuMatchesReferenceOnEveryRunner({"batch_norm", attributes, {x, gamma, beta}, {shape}},
                                           Tolerance{4 * kFloatEpsilon, 20 * 8 * kFloatEpsilon, 0});
    const int64_t count = shape.NumElements() / shape.dim(1);
    const Tolerance sums{2 * kFloatEpsilon, 4 * kFloatEpsilon * count, 0};
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"batch_norm_grad",
         attributes,
         {RandomFloats(shape, ++seed), x, gamma},
         {shape, channels, channels}},
        std::vector<Tolerance>{{4 * kFloatEpsilon, 20 * 16 * kFloatEpsilon, 0}, sums, sums});
  }
}

TEST(BatchNormKernels, RunningStatisticsMatchTheReference) {
  uint64_t seed = 90;
  for (const Shape& shape : {Shape({3, 4, 5, 2}), Shape({1, 2, 1, 1}), Shape({6, 3})}) {
    SCOPED_TRACE(shape.ToString());
    const Shape channels({shape.dim(1)});
    HostTensor x = RandomFloats(shape, ++seed);
    // Batch mean and unbiased variance, sums in double, rounded once.
    ExpectCpuMatchesReferenceOnEveryRunner({"batch_norm_statistics", {}, {x}, {channels, channels}},
                                           Tolerance{4 * kFloatEpsilon, 1e-7, 0});
    HostTensor running_var = RandomFloats(channels, ++seed);
    for (float& value : running_var.floats) value = value * value + 0.5f;
    // Evaluation: y from the running statistics, a few roundings of |xhat gamma| < 20.
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"batch_norm",
         {BoolAttribute("use_running_statistics", true)},
         {x, RandomFloats(channels, ++seed), RandomFloats(channels, ++seed),
          RandomFloats(channels, ++seed), running_var},
         {shape}},
        Tolerance{4 * kFloatEpsilon, 20 * 8 * kFloatEpsilon, 0});
  }
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
