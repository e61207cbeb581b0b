// The fused kernel (runtime/kernels/cpu/fused_kernel.cc) against the reference, which runs each
// statement through the reference kernel of its op; and against the unfused cpu kernels run one
// after another, which it must match exactly: it applies the same per-element functions
// (elementwise_functions.h) in the same order, only without the trips through memory.
//
// Tolerances: as for the unfused ops (elementwise_matches_reference_test.cc): kRounding for
// chains of a few roundings, gelu's 1e-6 absolute and relative for chains through gelu or
// gelu_grad. A bfloat16 output may round the other way from the reference's where the float32
// value lies within its error of a rounding boundary: one bfloat16 unit (2^-8 relative).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/parallel_runner.h"
#include "runtime/kernels/testing/kernel_harness.h"
#include "runtime/kernels/testing/threaded_test_runner.h"
#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

using runtime::HostTensor;
using runtime::KernelHarness;

constexpr Tolerance kGelu = {1e-6, 1e-6, 0};
constexpr Tolerance kBFloat16Output = {kBFloat16Epsilon, 1e-30, 0};

proto::Attribute Program(const std::string& text) {
  return StringAttribute("program", text);
}

TEST(FusedKernel, BiasGeluAndACastToBfloat16MatchTheReferenceOnEveryRunner) {
  // 300 rows of 257: blocks and thread chunks end mid-row, so the bias restarts mid-block.
  OpCase op{"fused",
            {Program("t0 = bias_add(x0, x1); t1 = gelu(t0); t2 = cast(t1, bfloat16); "
                     "y0 = t0; y1 = t2")},
            {RandomFloats(Shape({300, 257}), 1), RandomFloats(Shape({257}), 2)},
            {Shape({300, 257}), Shape({300, 257})}};
  op.output_dtypes = {DType::kFloat32, DType::kBFloat16};
  for (runtime::ThreadedTestRunner::Split split :
       {runtime::ThreadedTestRunner::Split::kUneven, runtime::ThreadedTestRunner::Split::kEven}) {
    runtime::ThreadedTestRunner runner(3, split);
    ExpectCpuMatchesReference(op, {kRounding, kBFloat16Output}, &runner);
  }
  runtime::SerialRunner serial;
  ExpectCpuMatchesReference(op, {kRounding, kBFloat16Output}, &serial);
}

TEST(FusedKernel, EveryOpOfAProgramMatchesTheReference) {
  struct Case {
    std::string program;
    int inputs;
    Tolerance tolerance;
  };
  const Shape shape({33, 70});
  const std::vector<Case> cases = {
      {"t0 = add(x0, x1); t1 = scale(t0, -0.75); t2 = relu(t1); y0 = t2", 2, kRounding},
      {"t0 = add_n(x0, x1, x2); t1 = relu_grad(t0, x3); y0 = t1", 4, SumTolerance(3)},
      {"t0 = gelu_grad(x0, x1); t1 = scale(t0, 2); y0 = t1", 2, kGelu},
      {"t0 = cast(x0, bfloat16); t1 = cast(t0, float32); t2 = gelu(t1); y0 = t2", 1, kGelu},
  };
  for (const Case& test : cases) {
    SCOPED_TRACE(test.program);
    std::vector<HostTensor> inputs;
    for (int input = 0; input < test.inputs; ++input) {
      inputs.push_back(RandomFloats(shape, 10 + static_cast<uint64_t>(input)));
    }
    ExpectCpuMatchesReferenceOnEveryRunner({"fused", {Program(test.program)}, inputs, {shape}},
                                           test.tolerance);
  }
}

TEST(FusedKernel, ABroadcastOperandAndABfloat16InputAreStagedPerBlock) {
  // embedded = token [B, T, C] + position [T, C]; a bfloat16 input widened by a cast.
  OpCase op{"fused",
            {Program("t0 = add(x0, x1); t1 = cast(x2, float32); t2 = add(t0, t1); y0 = t2")},
            {RandomFloats(Shape({5, 9, 40}), 1), RandomFloats(Shape({9, 40}), 2),
             RandomBFloat16s(Shape({5, 9, 40}), 3)},
            {Shape({5, 9, 40})}};
  // Two float32 additions: their roundings bound by the sum of the operands' magnitudes.
  ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(3));
}

// The fused kernel against the unfused kernels on the same runner: bit for bit.
TEST(FusedKernel, ComputesExactlyWhatTheUnfusedKernelsComputeOneAfterAnother) {
  runtime::KernelRegistry registry;
  runtime::RegisterCpuKernels(&registry);
  runtime::ThreadedTestRunner runner(3, runtime::ThreadedTestRunner::Split::kUneven);
  const Shape shape({64, 130});
  const HostTensor x = RandomFloats(shape, 5);
  const HostTensor bias = RandomFloats(Shape({130}), 6);
  const HostTensor dy = RandomFloats(shape, 7);

  auto run = [&](const std::string& op_type, const std::vector<proto::Attribute>& attributes,
                 std::vector<HostTensor> inputs, std::vector<HostTensor> outputs) {
    KernelHarness harness(op_type, attributes, std::move(inputs), std::move(outputs));
    EXPECT_TRUE(harness.Create(registry).ok()) << op_type;
    EXPECT_TRUE(harness.Run(&runner).ok()) << op_type;
    std::vector<HostTensor> results;
    for (int k = 0; k < harness.actor().kernel().output_size(); ++k) {
      results.push_back(harness.output(k));
    }
    return results;
  };
  const HostTensor zeros = HostTensor::Zeros(DType::kFloat32, shape);
  const HostTensor biased = run("bias_add", {}, {x, bias}, {zeros})[0];
  const HostTensor gelu = run("gelu", {}, {biased}, {zeros})[0];
  const HostTensor half = run("cast", {StringAttribute("dtype", "bfloat16")}, {gelu},
                              {HostTensor::Zeros(DType::kBFloat16, shape)})[0];
  const HostTensor gradient = run("gelu_grad", {}, {dy, biased}, {zeros})[0];

  const std::vector<HostTensor> fused =
      run("fused",
          {Program("t0 = bias_add(x0, x1); t1 = gelu(t0); t2 = cast(t1, bfloat16); "
                   "t3 = gelu_grad(x2, t0); y0 = t0; y1 = t2; y2 = t3")},
          {x, bias, dy}, {zeros, HostTensor::Zeros(DType::kBFloat16, shape), zeros});
  ASSERT_EQ(fused.size(), 3u);
  for (size_t i = 0; i < biased.floats.size(); ++i) {
    ASSERT_EQ(fused[0].floats[i], biased.floats[i]) << i;
    ASSERT_EQ(fused[1].bf16s[i].bits, half.bf16s[i].bits) << i;
    ASSERT_EQ(fused[2].floats[i], gradient.floats[i]) << i;
  }
}

TEST(FusedKernel, RefusesAProgramItsShapesDoNotFit) {
  runtime::KernelRegistry registry;
  runtime::RegisterCpuKernels(&registry);
  KernelHarness harness("fused", {Program("t0 = bias_add(x0, x1); y0 = t0")},
                        {RandomFloats(Shape({4, 6}), 1), RandomFloats(Shape({5}), 2)},
                        {HostTensor::Zeros(DType::kFloat32, Shape({4, 6}))});
  const Status status = harness.Create(registry);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("does not match the last axis"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
