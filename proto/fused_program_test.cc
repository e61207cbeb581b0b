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

TEST(FusedProgram, AnOrderingInputIsReadByNoStatementAndNeverWrittenOver) {
  constexpr char kRecompute[] = "t0 = gelu(x0); y0 = t0; after x1";
  StatusOr<FusedProgram> program = ParseFusedProgram(kRecompute);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->after_input, 1);
  EXPECT_EQ(program->InputCount(), 2);
  EXPECT_EQ(FormatFusedProgram(*program), kRecompute);
  StatusOr<FusedLayout> layout =
      InferFusedLayout(*program, {Shape({4, 8}), Shape({3})}, {DType::kFloat32, DType::kFloat32});
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->input_period, (std::vector<int64_t>{32, 0}));
  EXPECT_FALSE(FusedMayWriteOver(*program, 1, 0, true));
  EXPECT_TRUE(FusedMayWriteOver(*program, 0, 0, true));
  // A statement may not read it, and nothing may follow it.
  StatusOr<FusedProgram> read = ParseFusedProgram("t0 = add(x0, x1); y0 = t0; after x1");
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(
      InferFusedLayout(*read, {Shape({4}), Shape({4})}, {DType::kFloat32, DType::kFloat32}).ok());
  EXPECT_FALSE(ParseFusedProgram("t0 = gelu(x0); after x1; y0 = t0").ok());
  EXPECT_FALSE(ParseFusedProgram("t0 = gelu(x0); y0 = t0; after x1; after x2").ok());
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

TEST(FusedProgram, AProductStartsAnEpilogueWithItsTransposesAndShapes) {
  constexpr char kText[] =
      "t0 = matmul(x0, x1, transpose_b); t1 = bias_add(t0, x2); t2 = relu(t1); "
      "t3 = cast(t2, bfloat16); y0 = t2; y1 = t3";
  StatusOr<FusedProgram> program = ParseFusedProgram(kText);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(program->HasProduct());
  EXPECT_FALSE(program->steps[0].transpose_a);
  EXPECT_TRUE(program->steps[0].transpose_b);
  EXPECT_EQ(FormatFusedProgram(*program), kText);
  EXPECT_EQ(FusedOpsLabel(*program), "matmul+bias_add+relu+cast");
  // a [2, 3, 8] (leading axes flatten into M = 6) times b^T, b [5, 8]: c [2, 3, 5].
  StatusOr<FusedLayout> layout =
      InferFusedLayout(*program, {Shape({2, 3, 8}), Shape({5, 8}), Shape({5})},
                       {DType::kBFloat16, DType::kBFloat16, DType::kFloat32});
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->elements, 30);
  EXPECT_EQ(layout->step_shapes[0], Shape({2, 3, 5}));
  EXPECT_EQ(layout->step_dtypes[0], DType::kFloat32);
  EXPECT_EQ(layout->step_dtypes[3], DType::kBFloat16);
  EXPECT_EQ(layout->product_rows, 6);
  EXPECT_EQ(layout->product_columns, 5);
  EXPECT_EQ(layout->product_depth, 8);
  EXPECT_EQ(layout->input_period, (std::vector<int64_t>{48, 40, 5}));
  StatusOr<FusedProgram> both =
      ParseFusedProgram("t0 = matmul(x0, x1, transpose_a, transpose_b); t1 = relu(t0); y0 = t1");
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_TRUE(both->steps[0].transpose_a && both->steps[0].transpose_b);
  StatusOr<FusedLayout> transposed =
      InferFusedLayout(*both, {Shape({8, 6}), Shape({5, 8})}, {DType::kFloat32, DType::kFloat32});
  ASSERT_TRUE(transposed.ok()) << transposed.status();
  EXPECT_EQ(transposed->step_shapes[0], Shape({6, 5}));
}

TEST(FusedProgram, RefusesAProductThatIsNotTheFirstStatementOrSharesItsOperands) {
  const std::vector<DType> floats = {DType::kFloat32, DType::kFloat32, DType::kFloat32};
  const std::pair<const char*, const char*> cases[] = {
      {"t0 = relu(x2); t1 = matmul(x0, x1); y0 = t1", "must be statement t0"},
      {"t0 = matmul(x1, x0); t1 = add(t0, x2); y0 = t1", "must be statement t0 and read x0"},
      {"t0 = matmul(x0, x1); t1 = add(t0, x0); y0 = t1", "the product's operand"},
  };
  for (const auto& [text, problem] : cases) {
    StatusOr<FusedProgram> program = ParseFusedProgram(text);
    ASSERT_TRUE(program.ok()) << text << ": " << program.status();
    StatusOr<FusedLayout> layout =
        InferFusedLayout(*program, {Shape({4, 4}), Shape({4, 4}), Shape({4, 4})}, floats);
    ASSERT_FALSE(layout.ok()) << text;
    EXPECT_NE(layout.status().message().find(problem), std::string::npos)
        << text << ": " << layout.status().message();
  }
  StatusOr<FusedProgram> product = ParseFusedProgram("t0 = matmul(x0, x1); t1 = relu(t0); y0 = t1");
  ASSERT_TRUE(product.ok());
  EXPECT_FALSE(
      InferFusedLayout(*product, {Shape({4, 3}), Shape({4, 4})}, {DType::kFloat32, DType::kFloat32})
          .ok())
      << "inner extents differ";
  EXPECT_FALSE(InferFusedLayout(*product, {Shape({4, 4}), Shape({4, 4})},
                                {DType::kBFloat16, DType::kFloat32})
                   .ok())
      << "mixed operand dtypes";
  EXPECT_FALSE(ParseFusedProgram("t0 = matmul(x0, x1, transpose_b, transpose_b); y0 = t0").ok());
  EXPECT_FALSE(ParseFusedProgram("t0 = matmul(x0, x1, sideways); y0 = t0").ok());
  EXPECT_FALSE(IsFusableOpType("matmul")) << "a product only starts a program";
  EXPECT_TRUE(IsFusableProductOpType("matmul"));
}

TEST(FusedProgram, WithAProductNoOutputLiesOverTheOperandsOrIsTheProductsValue) {
  StatusOr<FusedProgram> plain = ParseFusedProgram("t0 = add(x0, x1); y0 = t0");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(FusedMayWriteOver(*plain, 0, 0, true));
  StatusOr<FusedProgram> product =
      ParseFusedProgram("t0 = matmul(x0, x1); t1 = add(t0, x2); t2 = relu(t1); y0 = t0; y1 = t2");
  ASSERT_TRUE(product.ok());
  EXPECT_FALSE(FusedMayWriteOver(*product, 0, 1, true)) << "a's rows are read by every column band";
  EXPECT_FALSE(FusedMayWriteOver(*product, 1, 1, true));
  EXPECT_FALSE(FusedMayWriteOver(*product, 2, 0, true)) << "c's bands land before x2 is read";
  EXPECT_TRUE(FusedMayWriteOver(*product, 2, 1, true));
}

TEST(FusedProgram, AProductNoOutputKeepsLandsInAFloat32OutputNotLaidOverAnInput) {
  StatusOr<FusedProgram> product =
      ParseFusedProgram("t0 = matmul(x0, x1, transpose_b); t1 = gelu_grad(t0, x2); y0 = t1");
  ASSERT_TRUE(product.ok());
  EXPECT_FALSE(FusedMayWriteOver(*product, 2, 0, /*float32_output=*/true))
      << "y0 is where c's bands land; over x2 they would land before x2 is read";
  EXPECT_TRUE(FusedMayWriteOver(*product, 2, 0, /*float32_output=*/false))
      << "bfloat16 outputs cannot hold c: its bands go to scratch, and y0 may lie over x2";
}

}  // namespace
}  // namespace softwire
