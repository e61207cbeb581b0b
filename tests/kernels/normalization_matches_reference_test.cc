// softmax, softmax_grad, softmax_cross_entropy(_grad), accuracy, layer_norm and layer_norm_grad
// against the reference.
//
// Tolerances, with u = 2^-24 and S(n) = RowSumError(n) the worst relative error of a 16-lane
// row sum of n terms:
// - softmax: each y = exp(x - max) / sum carries the polynomial Exp's error (< 1e-7 relative),
//   the rounding of its argument x - max (0.5u |x - max| absolute, hence as much relative error
//   in exp; |x - max| < 32 for the 3 * N(0, 1) inputs here), the sum's S(V) and a few
//   roundings: relative 1e-7 + 16u + S(V) + 4u.
// - softmax_grad: dx = y (dy - sum(dy y)); the dot product errs by S(V) sum |dy y| <=
//   S(V) max|dy| (sum y = 1), with |dy| < 6 for our normal samples: absolute 6 S(V) + relative 4u.
// - softmax_cross_entropy: log(sum) + max - x[label]; log(sum) errs by the sum's relative error
//   (absolute, after the log), the two additions by u times |max| + |log sum| + |x[label]| < 20:
//   absolute 1e-7 + S(V) + 20 * 4u.
// - softmax_cross_entropy_grad: dloss * (p - onehot), p as for softmax, |dloss| < 6: absolute
//   6 (1e-7 + S(V)) + relative 4u.
// - layer_norm: mean and variance carry S(C) relative error (against sum |x| and sum (x-mean)^2,
//   both ~C for unit-variance rows), which reach y through xhat * gamma, |xhat gamma| < 20 here:
//   absolute 20 * 2 S(C) + relative 4u.
// - layer_norm_grad: dx adds two more row sums of g and g xhat: absolute 40 * 3 S(C), relative 4u.
//   dgamma and dbeta are column sums over R rows: SumTolerance(R) against the exact magnitudes
//   sum |dy xhat| and sum |dy| (given explicitly, since the op is not linear in x), plus the
//   error xhat brings in: absolute R * 2 S(C).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

using runtime::HostTensor;

constexpr double kExpError = 1e-7;  // vector_math.h Exp, relative.

// Inputs are 3 * N(0, 1): within a row |x - max| < 32, so rounding x - max costs 16u.
Tolerance SoftmaxTolerance(int64_t v) {
  return {kExpError + 16 * kFloatEpsilon + RowSumError(v) + 4 * kFloatEpsilon, 0, 0};
}

Shape Rows(const Shape& shape) {
  return Shape(std::vector<int64_t>(shape.dims().begin(), shape.dims().end() - 1));
}

TEST(SoftmaxKernels, SoftmaxAndSoftmaxGradMatchTheReference) {
  struct Case {
    Shape x;
    bool causal;
  };
  for (const Case& c : {Case{Shape({5, 10}), false}, Case{Shape({3, 1000}), false},
                        Case{Shape({7}), false}, Case{Shape({2, 3, 9, 9}), true},
                        Case{Shape({300, 257}), false}, Case{Shape({16, 64, 64}), true}}) {
    SCOPED_TRACE(c.x.ToString() + (c.causal ? " causal" : ""));
    const int64_t v = c.x.dim(-1);
    HostTensor x = RandomFloats(c.x, 1);
    for (float& value : x.floats) value *= 3.0f;  // Peaked rows as well as flat ones.
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"softmax", {BoolAttribute("causal", c.causal)}, {x}, {c.x}}, SoftmaxTolerance(v));
    runtime::SerialRunner serial;
    HostTensor y = RunCpu({"softmax", {BoolAttribute("causal", c.causal)}, {x}, {c.x}}, &serial)[0];
    ExpectCpuMatchesReferenceOnEveryRunner({"softmax_grad", {}, {RandomFloats(c.x, 2), y}, {c.x}},
                                           Tolerance{4 * kFloatEpsilon, 6 * RowSumError(v), 0});
  }
}

TEST(SoftmaxKernels, LargeSoftmaxSplitsRowsAcrossThreads) {
  OpCase op{"softmax", {}, {RandomFloats(Shape({300, 257}), 3)}, {Shape({300, 257})}};  // N(0, 1).
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(op, SoftmaxTolerance(257)), 0);
}

TEST(CrossEntropyKernels, LossGradientAndAccuracyMatchTheReference) {
  for (const Shape& logits_shape :
       {Shape({256, 10}), Shape({4, 7, 50}), Shape({1000, 100}), Shape({3, 1})}) {
    SCOPED_TRACE(logits_shape.ToString());
    const int64_t v = logits_shape.dim(-1);
    const Shape rows = Rows(logits_shape);
    HostTensor logits = RandomFloats(logits_shape, 4);
    HostTensor labels = RandomInts(rows, v, 5);
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"softmax_cross_entropy", {}, {logits, labels}, {rows}},
        Tolerance{4 * kFloatEpsilon, kExpError + RowSumError(v) + 80 * kFloatEpsilon, 0});
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"softmax_cross_entropy_grad", {}, {RandomFloats(rows, 6), logits, labels}, {logits_shape}},
        Tolerance{4 * kFloatEpsilon, 6 * (kExpError + RowSumError(v)), 0});
    ExpectCpuMatchesReferenceOnEveryRunner({"accuracy", {}, {logits, labels}, {Shape()}},
                                           kRounding);
  }
}

TEST(CrossEntropyKernels, AccuracyCountsRowsWhoseFirstMaximumIsTheLabel) {
  // Ties: the first maximum wins, as in the reference.
  HostTensor logits = HostTensor::Float(Shape({4, 3}), {1, 3, 3, 0, 0, 0, 5, 1, 2, 0, 1, 0});
  HostTensor labels = HostTensor::Int(Shape({4}), {1, 2, 0, 1});
  runtime::SerialRunner serial;
  EXPECT_EQ(RunCpu({"accuracy", {}, {logits, labels}, {Shape()}}, &serial)[0].floats[0], 0.75f);
}

// sum over rows of |dy| |xhat| and of |dy|, the magnitudes of dgamma and dbeta's sums.
std::vector<std::vector<double>> LayerNormGradMagnitudes(const HostTensor& dy, const HostTensor& x,
                                                         double epsilon) {
  const int64_t channels = x.shape.dim(-1);
  const int64_t rows = x.shape.NumElements() / channels;
  std::vector<double> dgamma(channels, 0.0);
  std::vector<double> dbeta(channels, 0.0);
  for (int64_t row = 0; row < rows; ++row) {
    double mean = 0;
    for (int64_t c = 0; c < channels; ++c) mean += x.floats[row * channels + c];
    mean /= channels;
    double variance = 0;
    for (int64_t c = 0; c < channels; ++c) {
      variance += std::pow(x.floats[row * channels + c] - mean, 2);
    }
    const double rstd = 1 / std::sqrt(variance / channels + epsilon);
    for (int64_t c = 0; c < channels; ++c) {
      const double g = std::abs(dy.floats[row * channels + c]);
      dgamma[c] += g * std::abs((x.floats[row * channels + c] - mean) * rstd);
      dbeta[c] += g;
    }
  }
  return {std::vector<double>(x.floats.size(), 0.0), dgamma, dbeta};
}

TEST(LayerNormKernels, LayerNormAndLayerNormGradMatchTheReference) {
  for (const Shape& shape :
       {Shape({4, 5}), Shape({2, 3, 17}), Shape({300, 300}), Shape({64, 768}), Shape({1, 1})}) {
    SCOPED_TRACE(shape.ToString());
    const int64_t channels = shape.dim(-1);
    const int64_t rows = shape.NumElements() / channels;
    const Shape channel_shape({channels});
    const double epsilon = 1e-5;
    HostTensor x = RandomFloats(shape, 7);
    for (float& value : x.floats) value = 2.0f * value + 1.5f;  // Rows with a nonzero mean.
    HostTensor gamma = RandomFloats(channel_shape, 8);
    HostTensor beta = RandomFloats(channel_shape, 9);
    const double s = RowSumError(channels);
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"layer_norm", {FloatAttribute("epsilon", epsilon)}, {x, gamma, beta}, {shape}},
        Tolerance{4 * kFloatEpsilon, 20 * 2 * s, 0});
    HostTensor dy = RandomFloats(shape, 10);
    OpCase grad{"layer_norm_grad",
                {FloatAttribute("epsilon", epsilon)},
                {dy, x, gamma},
                {shape, channel_shape, channel_shape},
                LayerNormGradMagnitudes(dy, x, epsilon)};
    Tolerance column_sums = SumTolerance(rows);
    column_sums.absolute = static_cast<double>(rows) * 2 * s;
    ExpectCpuMatchesReferenceOnEveryRunner(
        grad, {Tolerance{4 * kFloatEpsilon, 40 * 3 * s, 0}, column_sums, column_sums});
  }
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
