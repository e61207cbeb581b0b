// The fused kernel (runtime/kernels/cpu/fused_kernel.cc) against the reference, which runs each
// statement through the reference kernel of its op; and against the unfused cpu kernels run one
// after another, which it must match exactly: it applies the same per-element functions
// (elementwise_functions.h) in the same order, only without the trips through memory.
//
// Tolerances: as for the unfused ops (elementwise_matches_reference_test.cc): kRounding for
// chains of a few roundings, gelu's 1e-6 absolute and relative for chains through gelu or
// gelu_grad. A bfloat16 output may round the other way from the reference's where the float32
// value lies within its error of a rounding boundary: one bfloat16 unit (2^-8 relative). A
// product epilogue (a program that starts with matmul): the product's SumTolerance(K), as for
// matmul (matmul_matches_reference_test.cc), with one term more per addition after it; against
// the unfused matmul kernel and the element-wise kernels after it, bit for bit.
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

// Where the compiler lays an output over an input the program reads whole, the kernel must
// read every input element of a block before it writes the block's outputs: the same values as
// with outputs of their own, for an output that takes a statement's value, an output that takes a
// bfloat16 cast's rounding and the repeated bias read in place.
TEST(FusedKernel, AnOutputLaidOverAnInputGivesWhatSeparateOutputsGive) {
  runtime::KernelRegistry registry;
  runtime::RegisterCpuKernels(&registry);
  runtime::ThreadedTestRunner runner(3, runtime::ThreadedTestRunner::Split::kUneven);
  const Shape shape({37, 512});  // Rows of one block: the bias is read where it lies.
  // t2 reads x0 after t0, laid over x0, is made: a kernel that wrote t0 into x0 before the
  // block's statements were done would add t0 instead of x0.
  const std::string program =
      "t0 = bias_add(x0, x1); t1 = gelu(t0); t2 = add(t1, x0); t3 = add(t2, x2); "
      "t4 = cast(t3, bfloat16); y0 = t3; y1 = t4; y2 = t0";
  auto run = [&](bool over) {
    KernelHarness harness(
        "fused", {Program(program)},
        {RandomFloats(shape, 1), RandomFloats(Shape({512}), 2), RandomFloats(shape, 3)},
        {HostTensor::Zeros(DType::kFloat32, shape), HostTensor::Zeros(DType::kBFloat16, shape),
         HostTensor::Zeros(DType::kFloat32, shape)});
    if (over) {
      harness.WriteOutputOverInput(0, 2);  // y0 over x2, which t2 reads.
      harness.WriteOutputOverInput(2, 0);  // y2 over x0, which t0 reads.
    }
    EXPECT_TRUE(harness.Create(registry).ok());
    EXPECT_TRUE(harness.Run(&runner).ok());
    return std::vector<HostTensor>{over ? harness.input(2) : harness.output(0), harness.output(1),
                                   over ? harness.input(0) : harness.output(2)};
  };
  const std::vector<HostTensor> separate = run(false);
  const std::vector<HostTensor> over = run(true);
  for (size_t i = 0; i < separate[0].floats.size(); ++i) {
    ASSERT_EQ(over[0].floats[i], separate[0].floats[i]) << i;
    ASSERT_EQ(over[1].bf16s[i].bits, separate[1].bf16s[i].bits) << i;
    ASSERT_EQ(over[2].floats[i], separate[2].floats[i]) << i;
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

// Products of these shapes run whole (below kBlasSingleThreadWork), in bands of rows, and in
// bands of columns (c short and wide) on a runner of several threads.
struct ProductShape {
  int64_t m;
  int64_t k;
  int64_t n;
};
constexpr ProductShape kProductShapes[] = {{37, 53, 29}, {150, 64, 70}, {40, 64, 300}};

TEST(FusedKernel, AProductEpilogueMatchesTheReferenceForEveryTransposeAndSplit) {
  for (const ProductShape& size : kProductShapes) {
    for (bool transpose_a : {false, true}) {
      for (bool transpose_b : {false, true}) {
        const std::string flags =
            std::string(transpose_a ? ", transpose_a" : "") + (transpose_b ? ", transpose_b" : "");
        const std::string program =
            "t0 = matmul(x0, x1" + flags + "); t1 = bias_add(t0, x2); t2 = relu(t1); y0 = t2";
        SCOPED_TRACE(program + " m " + std::to_string(size.m) + " n " + std::to_string(size.n));
        const Shape a = transpose_a ? Shape({size.k, size.m}) : Shape({size.m, size.k});
        const Shape b = transpose_b ? Shape({size.n, size.k}) : Shape({size.k, size.n});
        OpCase op{"fused",
                  {Program(program)},
                  {RandomFloats(a, 1), RandomFloats(b, 2), RandomFloats(Shape({size.n}), 3)},
                  {Shape({size.m, size.n})}};
        ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(size.k + 1));
      }
    }
  }
}

TEST(FusedKernel, ABfloat16ProductEpilogueKeepsItsValueAndMatchesTheReference) {
  // The backward pass's dx = dy w^T, relu's gradient and the bf16 copy for the next product;
  // the product's value leaves too (its bands land in that output).
  const int64_t m = 256, k = 96, n = 160;
  OpCase op{"fused",
            {Program("t0 = matmul(x0, x1, transpose_b); t1 = relu_grad(t0, x2); "
                     "t2 = cast(t1, bfloat16); y0 = t0; y1 = t1; y2 = t2")},
            {RandomBFloat16s(Shape({m, k}), 4), RandomBFloat16s(Shape({n, k}), 5),
             RandomFloats(Shape({m, n}), 6)},
            {Shape({m, n}), Shape({m, n}), Shape({m, n})}};
  op.output_dtypes = {DType::kFloat32, DType::kFloat32, DType::kBFloat16};
  // The bf16 copy: the float32 value's error may round it the other way, one bfloat16 unit
  // (up to 2^-7 of the value) besides that error.
  const Tolerance copy = {2 * kBFloat16Epsilon, 1e-30, SumTolerance(k).per_term};
  for (int threads : {1, 3}) {
    runtime::ThreadedTestRunner runner(threads, runtime::ThreadedTestRunner::Split::kUneven);
    ExpectCpuMatchesReference(op, {SumTolerance(k), SumTolerance(k), copy}, &runner);
  }
}

// The fused product epilogue against the matmul kernel, then the element-wise kernels, on the
// same runner: bit for bit, in float32 (whole, row bands, column bands) and bf16.
TEST(FusedKernel, AProductEpilogueComputesExactlyWhatTheUnfusedKernelsCompute) {
  runtime::KernelRegistry registry;
  runtime::RegisterCpuKernels(&registry);
  runtime::ThreadedTestRunner runner(2, runtime::ThreadedTestRunner::Split::kEven);
  auto run = [&](const std::string& op_type, const std::vector<proto::Attribute>& attributes,
                 std::vector<HostTensor> inputs, std::vector<HostTensor> outputs) {
    KernelHarness harness(op_type, attributes, std::move(inputs), std::move(outputs));
    const Status created = harness.Create(registry);
    EXPECT_TRUE(created.ok()) << op_type << ": " << created;
    EXPECT_TRUE(harness.Run(&runner).ok()) << op_type;
    std::vector<HostTensor> results;
    for (int k = 0; k < harness.actor().kernel().output_size(); ++k) {
      results.push_back(harness.output(k));
    }
    return results;
  };
  for (bool bf16 : {false, true}) {
    for (const ProductShape& size : kProductShapes) {
      SCOPED_TRACE(std::string(bf16 ? "bf16" : "float32") + " m " + std::to_string(size.m) + " n " +
                   std::to_string(size.n));
      const Shape c_shape({size.m, size.n});
      const HostTensor a = bf16 ? RandomBFloat16s(Shape({size.m, size.k}), 7)
                                : RandomFloats(Shape({size.m, size.k}), 7);
      const HostTensor b = bf16 ? RandomBFloat16s(Shape({size.k, size.n}), 8)
                                : RandomFloats(Shape({size.k, size.n}), 8);
      const HostTensor bias = RandomFloats(Shape({size.n}), 9);
      const HostTensor zeros = HostTensor::Zeros(DType::kFloat32, c_shape);
      const HostTensor half_zeros = HostTensor::Zeros(DType::kBFloat16, c_shape);
      const HostTensor c = run("matmul", {}, {a, b}, {zeros})[0];
      const HostTensor biased = run("bias_add", {}, {c, bias}, {zeros})[0];
      const HostTensor gelu = run("gelu", {}, {biased}, {zeros})[0];
      const HostTensor half =
          run("cast", {StringAttribute("dtype", "bfloat16")}, {gelu}, {half_zeros})[0];
      // Without the product's value among the outputs (scratch bands), and with it.
      const std::vector<HostTensor> fused =
          run("fused",
              {Program("t0 = matmul(x0, x1); t1 = bias_add(t0, x2); t2 = gelu(t1); "
                       "t3 = cast(t2, bfloat16); y0 = t1; y1 = t3")},
              {a, b, bias}, {zeros, half_zeros});
      const std::vector<HostTensor> kept =
          run("fused", {Program("t0 = matmul(x0, x1); t1 = bias_add(t0, x2); y0 = t0; y1 = t1")},
              {a, b, bias}, {zeros, zeros});
      ASSERT_EQ(fused.size(), 2u);
      ASSERT_EQ(kept.size(), 2u);
      for (size_t i = 0; i < c.floats.size(); ++i) {
        ASSERT_EQ(fused[0].floats[i], biased.floats[i]) << i;
        ASSERT_EQ(fused[1].bf16s[i].bits, half.bf16s[i].bits) << i;
        ASSERT_EQ(kept[0].floats[i], c.floats[i]) << i;
        ASSERT_EQ(kept[1].floats[i], biased.floats[i]) << i;
      }
    }
  }
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
