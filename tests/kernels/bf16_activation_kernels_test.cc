// The kernels that keep activations in bfloat16 between convolutions (docs/PRECISION.md):
// conv2d and conv2d_grad_input writing bfloat16, batch_norm, batch_norm_grad and
// batch_norm_statistics reading (and writing) bfloat16, relu, relu_grad, add, add_n in bfloat16,
// global_avg_pool reading bfloat16, against the double reference, which computes in double and
// rounds every bfloat16 output once (ReferenceKernelTable::Run).
//
// Tolerance of a bfloat16 output: the kernel rounds its float32 value v_f once, the reference
// its double value v_d, so |cpu - ref| <= 2^-8 |v_f| + |v_f - v_d| + 2^-8 |v_d|, that is
// 2^-7 |ref| (one bfloat16 unit, 2 kBFloat16Epsilon) plus the float32 kernel's own bound
// (convolution_matches_reference_test.cc) times 1 + 2^-8. Float32 outputs (statistics,
// dgamma, dbeta, pooled means, the weight gradient) keep the float32 kernels' bounds: their
// bfloat16 inputs are exact values, read as the reference reads them.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

using runtime::HostTensor;

// A bfloat16 output whose float32 value is within `float32` of the exact one.
Tolerance Bf16Output(const Tolerance& float32) {
  const double widen = 1 + kBFloat16Epsilon;
  return Tolerance{2 * kBFloat16Epsilon + float32.relative * widen, float32.absolute * widen,
                   float32.per_term * widen};
}

constexpr DType kBf16 = DType::kBFloat16;

void ExpectConvolutionsWritingBf16MatchTheReference() {
  struct Case {
    Shape x;
    Shape w;
    std::vector<int64_t> strides;
    std::vector<int64_t> padding;
  };
  uint64_t seed = 200;
  for (const Case& c : {Case{Shape({4, 16, 8, 8}), Shape({16, 16, 3, 3}), {1, 1}, {1, 1}},
                        Case{Shape({3, 16, 9, 7}), Shape({32, 16, 3, 3}), {2, 2}, {1, 1}},
                        Case{Shape({2, 8, 6, 6}), Shape({16, 8, 1, 1}), {2, 2}, {0, 0}}}) {
    SCOPED_TRACE(c.x.ToString() + " * " + c.w.ToString());
    const std::vector<proto::Attribute> attributes = {IntsAttribute("strides", c.strides),
                                                      IntsAttribute("padding", c.padding),
                                                      StringAttribute("output_dtype", "bfloat16")};
    const int64_t oh = (c.x.dim(2) + 2 * c.padding[0] - c.w.dim(2)) / c.strides[0] + 1;
    const int64_t ow = (c.x.dim(3) + 2 * c.padding[1] - c.w.dim(3)) / c.strides[1] + 1;
    const Shape y({c.x.dim(0), c.w.dim(0), oh, ow});
    const HostTensor x = RandomBFloat16s(c.x, ++seed), w = RandomBFloat16s(c.w, ++seed);
    const int64_t k = c.w.NumElements() / c.w.dim(0);
    ExpectCpuMatchesReferenceOnEveryRunner(OpCase{"conv2d", attributes, {x, w}, {y}, {}, {kBf16}},
                                           Bf16Output(SumTolerance(k)));
    std::vector<proto::Attribute> grad_attributes = attributes;
    grad_attributes.push_back(IntsAttribute("shape", c.x.dims()));
    ExpectCpuMatchesReferenceOnEveryRunner(
        OpCase{"conv2d_grad_input",
               grad_attributes,
               {RandomBFloat16s(y, ++seed), w},
               {c.x},
               {},
               {kBf16}},
        Bf16Output(SumTolerance(c.w.dim(0) * c.w.dim(2) * c.w.dim(3))));
  }
}

TEST(Bf16ActivationKernels, ConvolutionsWriteBf16AsTheReferenceRoundsOnThisCpusPath) {
  ExpectConvolutionsWritingBf16MatchTheReference();
}

TEST(Bf16ActivationKernels, ConvolutionsWriteBf16OnTheFloat32FallbackOfCpusWithoutBf16) {
  setenv("SOFTWIRE_CPU_FEATURES_OFF", "avx512_bf16,amx_bf16", 1);
  ExpectConvolutionsWritingBf16MatchTheReference();
  unsetenv("SOFTWIRE_CPU_FEATURES_OFF");
}

TEST(Bf16ActivationKernels, BatchNormReadsAndWritesBf16WithFloat32Statistics) {
  uint64_t seed = 220;
  for (const Shape& shape : {Shape({3, 2, 3, 5}), Shape({8, 32, 16, 16})}) {
    SCOPED_TRACE(shape.ToString());
    const Shape channels({shape.dim(1)});
    const std::vector<proto::Attribute> attributes = {FloatAttribute("epsilon", 1e-5)};
    const HostTensor x = RandomBFloat16s(shape, ++seed);
    const HostTensor gamma = RandomFloats(channels, ++seed), beta = RandomFloats(channels, ++seed);
    // The float32 bounds of convolution_matches_reference_test.cc.
    ExpectCpuMatchesReferenceOnEveryRunner(
        OpCase{"batch_norm", attributes, {x, gamma, beta}, {shape}, {}, {kBf16}},
        Bf16Output(Tolerance{4 * kFloatEpsilon, 20 * 8 * kFloatEpsilon, 0}));
    const int64_t count = shape.NumElements() / shape.dim(1);
    const Tolerance sums{2 * kFloatEpsilon, 4 * kFloatEpsilon * count, 0};
    ExpectCpuMatchesReferenceOnEveryRunner(
        OpCase{"batch_norm_grad",
               attributes,
               {RandomBFloat16s(shape, ++seed), x, gamma},
               {shape, channels, channels},
               {},
               {kBf16, DType::kFloat32, DType::kFloat32}},
        std::vector<Tolerance>{Bf16Output({4 * kFloatEpsilon, 20 * 16 * kFloatEpsilon, 0}), sums,
                               sums});
    ExpectCpuMatchesReferenceOnEveryRunner(
        OpCase{"batch_norm_statistics", {}, {x}, {channels, channels}},
        Tolerance{4 * kFloatEpsilon, 1e-7, 0});
  }
}

TEST(Bf16ActivationKernels, ReluAddAndTheirGradientsComputeInFloat32AndRoundOnce) {
  uint64_t seed = 240;
  // Odd sizes split unevenly over the runners; the large one runs in parallel.
  for (const Shape& shape : {Shape({3, 5, 7, 11}), Shape({64, 16, 32, 32})}) {
    SCOPED_TRACE(shape.ToString());
    const HostTensor a = RandomBFloat16s(shape, ++seed), b = RandomBFloat16s(shape, ++seed);
    // relu and relu_grad select exact values: equal. add rounds a float32 sum of two bfloat16
    // values (exact in float32 unless their exponents differ by more than 16) once.
    const Tolerance exact{0, 0, 0};
    const int64_t parallel_calls = ExpectCpuMatchesReferenceOnEveryRunner(
        OpCase{"relu", {}, {a}, {shape}, {}, {kBf16}}, exact);
    if (shape.NumElements() > 100000) {
      EXPECT_GT(parallel_calls, 0);
    }
    ExpectCpuMatchesReferenceOnEveryRunner(OpCase{"relu_grad", {}, {a, b}, {shape}, {}, {kBf16}},
                                           exact);
    ExpectCpuMatchesReferenceOnEveryRunner(OpCase{"add", {}, {a, b}, {shape}, {}, {kBf16}},
                                           Bf16Output(kRounding));
    ExpectCpuMatchesReferenceOnEveryRunner(
        OpCase{"add_n", {}, {a, b, RandomBFloat16s(shape, ++seed)}, {shape}, {}, {kBf16}},
        Bf16Output(SumTolerance(3)));
  }
}

TEST(Bf16ActivationKernels, GlobalAvgPoolReadsBf16AndWritesFloat32Means) {
  const Shape x({5, 16, 8, 8});
  ExpectCpuMatchesReferenceOnEveryRunner(
      OpCase{"global_avg_pool", {}, {RandomBFloat16s(x, 260)}, {Shape({5, 16})}},
      SumTolerance(64 + 1));
}

TEST(Bf16ActivationKernels, AMixOfBf16AndFloat32OperandsIsRefusedNamingTheOperand) {
  const Shape shape({2, 3, 4, 4});
  const OpCase mixed{"add",   {}, {RandomBFloat16s(shape, 270), RandomFloats(shape, 271)},
                     {shape}, {}, {kBf16}};
  runtime::SerialRunner runner;
  EXPECT_NONFATAL_FAILURE(RunCpu(mixed, &runner), "input 1 (b) must be bfloat16");
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
