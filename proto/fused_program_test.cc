#include "proto/fused_program.h"

#include <gtest/gtest.h>

namespace softwire {
namespace {

constexpr char kBiasGeluCast[] =
    "t0 = bias_add(x0, x1); t1 = gelu(t0); t2 = cast(t1, bfloat16); y0 = t0; y1 = t2";

TEST(FusedProgram, ParsesStatementsAndOutputsAndFormatsThemBackTheSame) {
  StatusOr<FusedProgram> program = ParseFusedProgram(kBiasGeluCast);
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->steps.size(), 3u);
  EXPECT_EQ(program->steps[0].op, FusedOp::kBiasAdd);
  EXPECT_TRUE(program->steps[0].operands[1] == (FusedOperand{true, 1}));
  EXPECT_TRUE(program->steps[1].operands[0] == (FusedOperand{false, 0}));
  EXPECT_EQ(program->steps[2].dtype, DType::kBFloat16);
  EXPECT_EQ(program->outputs, (std::vector<int>{0, 2}));
  EXPECT_EQ(program->InputCount(), 2);
  EXPECT_EQ(FormatFusedProgram(*program), kBiasGeluCast);
  EXPECT_EQ(FusedOpsLabel(*program), "bias_add+gelu+cast");
}

TEST(FusedProgram, AScaleFactorRoundTripsToTheLastDigit) {
  StatusOr<FusedProgram> program =
      ParseFusedProgram("t0 = scale(x0, 0.17677669529663687); t1 = add_n(t0, x1, x2); y0 = t1");
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->steps[0].factor, 0.17677669529663687);
  EXPECT_EQ(program->steps[1].operands.size(), 3u);
  StatusOr<FusedProgram> again = ParseFusedProgram(FormatFusedProgram(*program));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->steps[0].factor, program->steps[0].factor);
}

TEST(FusedProgram, RefusesMalformedProgramsNamingTheStatement) {
  const std::pair<const char*, const char*> cases[] = {
      {"t0 = tanh(x0); y0 = t0", "unknown op 'tanh'"},
      {"t0 = relu(x0, x1); y0 = t0", "relu takes 1 operands, not 2"},
      {"t0 = relu(t0); y0 = t0", "operand 't0' is no input"},
      {"t1 = relu(x0); y0 = t1", "expected t0"},
      {"t0 = relu(x0); y1 = t0", "expected y0"},
      {"t0 = relu(x0); y0 = t3", "must name a value"},
      {"t0 = scale(x0, half); y0 = t0", "factor 'half' is not a number"},
      {"t0 = cast(x0, int32); y0 = t0", "dtype must be float32 or bfloat16"},
      {"t0 = relu(x0)", "at least one statement and one output"},
      {"t0 = relu(x0); y0 = t0; t1 = gelu(t0)", "before the outputs"},
  };
  for (const auto& [text, problem] : cases) {
    StatusOr<FusedProgram> program = ParseFusedProgram(text);
    ASSERT_FALSE(program.ok()) << text;
    EXPECT_NE(program.status().message().find(problem), std::string::npos)
        << text << ": " << program.status().message();
  }
}

TEST(FusedProgram, ABiasAndASuffixBroadcastOperandAreReadRepeated) {
  StatusOr<FusedProgram> program =
      ParseFusedProgram("t0 = bias_add(x0, x1); t1 = add(x2, t0); t2 = relu(t1); y0 = t2");
  ASSERT_TRUE(program.ok()) << program.status();
  StatusOr<FusedLayout> layout =
      InferFusedLayout(*program, {Shape({4, 8, 16}), Shape({16}), Shape({1, 8, 16})},
                       {DType::kFloat32, DType::kFloat32, DType::kFloat32});
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->elements, 512);
  EXPECT_EQ(layout->input_period, (std::vector<int64_t>{512, 16, 128}));
  EXPECT_EQ(layout->step_shapes[2], Shape({4, 8, 16}));
}

TEST(FusedProgram, RefusesInputsThatCannotBeWalkedInOneFlatOrder) {
  StatusOr<FusedProgram> add = ParseFusedProgram("t0 = add(x0, x1); t1 = relu(t0); y0 = t1");
  ASSERT_TRUE(add.ok());
  // [4, 1] broadcast against [4, 16] repeats each element, not the whole operand.
  StatusOr<FusedLayout> column =
      InferFusedLayout(*add, {Shape({4, 16}), Shape({4, 1})}, {DType::kFloat32, DType::kFloat32});
  ASSERT_FALSE(column.ok());
  EXPECT_NE(column.status().message().find("must be a kernel input whose shape ends"),
            std::string::npos)
      << column.status().message();
  StatusOr<FusedProgram> relu = ParseFusedProgram("t0 = relu(x0); y0 = t0");
  ASSERT_TRUE(relu.ok());
  EXPECT_FALSE(InferFusedLayout(*relu, {Shape({4})}, {DType::kBFloat16}).ok())
      << "only a cast reads bfloat16";
  StatusOr<FusedProgram> grad = ParseFusedProgram("t0 = relu_grad(x0, x1); y0 = t0");
  ASSERT_TRUE(grad.ok());
  EXPECT_FALSE(
      InferFusedLayout(*grad, {Shape({4, 2}), Shape({8})}, {DType::kFloat32, DType::kFloat32})
          .ok());
  EXPECT_FALSE(
      InferFusedLayout(*relu, {Shape({4}), Shape({4})}, {DType::kFloat32, DType::kFloat32}).ok())
      << "an input no statement reads";
}

}  // namespace
}  // namespace softwire
