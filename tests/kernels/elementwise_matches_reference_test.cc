// Elementwise, broadcasting, bias, layout and gather kernels against the reference.
//
// Tolerances: results that are one or two float32 roundings of an exact expression use
// kRounding (4 units of roundoff). Sums (bias_add_grad, add_n, embedding_grad over repeated
// ids) use SumTolerance(terms). gelu and gelu_grad use the kernels' polynomial tanh, whose
// absolute error is below 3e-7: y = 0.5 x (1 + t) then errs by at most ~|x| * 1.5e-7 and
// gelu' by ~(1 + |x|^3) * 1e-7 for |x| < 5, hence 1e-6 absolute (with inputs ~N(0, 2^2)) on top
// of 1e-6 relative for the arithmetic.
#include <gtest/gtest.h>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

using runtime::HostTensor;

constexpr Tolerance kGelu = {1e-6, 1e-6, 0};

HostTensor Scaled(HostTensor tensor, float factor) {
  for (float& value : tensor.floats) value *= factor;
  return tensor;
}

TEST(BroadcastKernels, AddSubAndMulMatchTheReferenceForEveryBroadcastPattern) {
  struct Pattern {
    Shape a;
    Shape b;
    Shape c;
  };
  const std::vector<Pattern> patterns = {
      {Shape({7, 13}), Shape({7, 13}), Shape({7, 13})},       // Same shape.
      {Shape({4, 1, 5}), Shape({3, 1}), Shape({4, 3, 5})},    // Both broadcast.
      {Shape(), Shape({6}), Shape({6})},                      // Scalar a.
      {Shape({2, 3}), Shape({1}), Shape({2, 3})},             // Scalar-like b.
      {Shape({5, 1}), Shape({1, 9}), Shape({5, 9})},          // Outer product.
      {Shape(), Shape(), Shape()},                            // Scalars.
      {Shape({300, 257}), Shape({257}), Shape({300, 257})},   // Bias-like, parallel.
      {Shape({300, 1}), Shape({1, 257}), Shape({300, 257})},  // Outer product, parallel.
      {Shape({2, 1, 3, 1}), Shape({5, 1, 4}), Shape({2, 5, 3, 4})},
  };
  for (const std::string op_type : {"add", "sub", "mul"}) {
    for (const Pattern& pattern : patterns) {
      SCOPED_TRACE(op_type + " " + pattern.a.ToString() + " " + pattern.b.ToString());
      ExpectCpuMatchesReferenceOnEveryRunner(
          {op_type, {}, {RandomFloats(pattern.a, 1), RandomFloats(pattern.b, 2)}, {pattern.c}},
          kRounding);
    }
  }
}

TEST(BroadcastKernels, LargeSameShapeOperandsSplitAcrossThreads) {
  OpCase op{"mul",
            {},
            {RandomFloats(Shape({70000}), 3), RandomFloats(Shape({70000}), 4)},
            {Shape({70000})}};
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(op, kRounding), 0);
}

TEST(BroadcastAxesKernel, RepeatsXAlongTheGivenAxes) {
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
    Shape y;
  };
  const std::vector<Case> cases = {
      {Shape({4, 5}), {1}, Shape({4, 3, 5})}, {Shape({4, 1, 5}), {-2}, Shape({4, 3, 5})},
      {Shape({3}), {0, 2}, Shape({4, 3, 5})}, {Shape(), {0, 1}, Shape({6, 7})},
      {Shape({300}), {1}, Shape({300, 257})},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.x.ToString() + " -> " + c.y.ToString());
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"broadcast_axes",
         {IntsAttribute("shape", c.y.dims()), IntsAttribute("axes", c.axes)},
         {RandomFloats(c.x, 5)},
         {c.y}},
        kRounding);
  }
}

TEST(ElementwiseKernels, ScaleIdentityReshapeFillAndAddNMatchTheReference) {
  for (const Shape& shape : {Shape({3, 5}), Shape({301, 257})}) {
    SCOPED_TRACE(shape.ToString());
    HostTensor x = RandomFloats(shape, 6);
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"scale", {FloatAttribute("factor", -0.37)}, {x}, {shape}}, kRounding);
    ExpectCpuMatchesReferenceOnEveryRunner({"identity", {}, {x}, {shape}}, kRounding);
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"reshape", {IntsAttribute("shape", {-1})}, {x}, {Shape({shape.NumElements()})}},
        kRounding);
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"fill",
         {IntsAttribute("shape", shape.dims()), FloatAttribute("value", 0.25)},
         {},
         {shape}},
        kRounding);
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"add_n",
         {},
         {x, RandomFloats(shape, 7), RandomFloats(shape, 8), RandomFloats(shape, 9)},
         {shape}},
        SumTolerance(4));
  }
}

TEST(ActivationKernels, ReluGeluAndTheirGradientsMatchTheReference) {
  for (const Shape& shape : {Shape({3, 5}), Shape({301, 257})}) {
    SCOPED_TRACE(shape.ToString());
    HostTensor x = Scaled(RandomFloats(shape, 10), 2.0f);
    HostTensor dy = RandomFloats(shape, 11);
    ExpectCpuMatchesReferenceOnEveryRunner({"relu", {}, {x}, {shape}}, kRounding);
    ExpectCpuMatchesReferenceOnEveryRunner({"relu_grad", {}, {dy, x}, {shape}}, kRounding);
    ExpectCpuMatchesReferenceOnEveryRunner({"gelu", {}, {x}, {shape}}, kGelu);
    ExpectCpuMatchesReferenceOnEveryRunner({"gelu_grad", {}, {dy, x}, {shape}}, kGelu);
  }
}

TEST(ActivationKernels, GeluSplitsMediumTensorsAcrossThreads) {
  // gelu counts ~20 operations per element, so 4096 elements are already worth splitting.
  OpCase op{"gelu", {}, {RandomFloats(Shape({4096}), 12)}, {Shape({4096})}};
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(op, kGelu), 0);
}

TEST(BiasKernels, BiasAddAndBiasAddGradMatchTheReference) {
  struct Case {
    Shape x;
    int64_t rows;
  };
  for (const Case& c :
       {Case{Shape({5, 7}), 5}, Case{Shape({2, 3, 4}), 6}, Case{Shape({256, 1024}), 256},
        Case{Shape({1000, 10}), 1000}, Case{Shape({9}), 1}}) {
    SCOPED_TRACE(c.x.ToString());
    const Shape channels({c.x.dim(-1)});
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"bias_add", {}, {RandomFloats(c.x, 13), RandomFloats(channels, 14)}, {c.x}}, kRounding);
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"bias_add_grad", {}, {RandomFloats(c.x, 15)}, {channels}}, SumTolerance(c.rows));
  }
}

TEST(BiasKernels, TheMlpsBiasGradientSplitsByColumns) {
  OpCase op{"bias_add_grad", {}, {RandomFloats(Shape({256, 1024}), 16)}, {Shape({1024})}};
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(256)), 0);
}

TEST(TransposeKernel, MatchesTheReferenceForCopyAndTilePaths) {
  struct Case {
    Shape x;
    std::vector<int64_t> perm;
  };
  const std::vector<Case> cases = {
      {Shape({37, 53}), {1, 0}},            // Tiles, odd edges.
      {Shape({2, 5, 7, 3}), {0, 2, 1, 3}},  // Last axis stays: row copies.
      {Shape({4, 5, 6}), {2, 0, 1}},
      {Shape({3, 1, 4, 5}), {3, 2, 1, 0}},  // Extent-1 axis.
      {Shape({6, 7}), {0, 1}},              // Identity permutation.
      {Shape({2, 3, 4, 5}), {1, 0, 3, 2}},
      {Shape({300, 257}), {1, 0}},       // Parallel tiles.
      {Shape({64, 40, 33}), {1, 0, 2}},  // Parallel row copies.
      {Shape(), {}},
  };
  for (const Case& c : cases) {
    std::vector<int64_t> y_dims;
    for (int64_t axis : c.perm) y_dims.push_back(c.x.dim(static_cast<int>(axis)));
    SCOPED_TRACE(c.x.ToString() + " perm " + Shape(c.perm).ToString());
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"transpose", {IntsAttribute("perm", c.perm)}, {RandomFloats(c.x, 17)}, {Shape(y_dims)}},
        kRounding);
  }
}

TEST(TransposeKernel, MovesInt32ValuesUnchanged) {
  HostTensor x = RandomInts(Shape({3, 4}), 1000, 18);
  runtime::KernelRegistry registry;
  runtime::RegisterCpuKernels(&registry);
  runtime::KernelHarness harness("transpose", {IntsAttribute("perm", {1, 0})}, {x},
                                 {HostTensor::Zeros(DType::kInt32, Shape({4, 3}))});
  ASSERT_TRUE(harness.Create(registry).ok());
  runtime::SerialRunner runner;
  ASSERT_TRUE(harness.Run(&runner).ok());
  for (int64_t row = 0; row < 3; ++row) {
    for (int64_t column = 0; column < 4; ++column) {
      EXPECT_EQ(harness.output(0).ints[column * 3 + row], x.ints[row * 4 + column]);
    }
  }
}

TEST(EmbeddingKernels, EmbeddingAndEmbeddingGradMatchTheReference) {
  struct Case {
    int64_t rows;
    int64_t channels;
    Shape ids;
  };
  for (const Case& c :
       {Case{50, 16, Shape({4, 9})}, Case{3, 5, Shape({40})}, Case{256, 64, Shape({8, 128})}}) {
    SCOPED_TRACE(c.ids.ToString());
    HostTensor ids = RandomInts(c.ids, c.rows, 19);
    std::vector<int64_t> y_dims = c.ids.dims();
    y_dims.push_back(c.channels);
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"embedding", {}, {RandomFloats(Shape({c.rows, c.channels}), 20), ids}, {Shape(y_dims)}},
        kRounding);
    // An id repeats at most ids.NumElements() times: that many terms per sum.
    ExpectCpuMatchesReferenceOnEveryRunner({"embedding_grad",
                                            {IntAttribute("num_embeddings", c.rows)},
                                            {RandomFloats(Shape(y_dims), 21), ids},
                                            {Shape({c.rows, c.channels})}},
                                           SumTolerance(c.ids.NumElements()));
  }
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
