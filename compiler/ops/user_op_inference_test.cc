// Shape and dtype inference of the user ops of docs/OPS.md, and the messages of their errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/ops/op_registry.h"
#include "compiler/ops/shape_helpers.h"
#include "compiler/testing/compiler_test_util.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class UserOpInference : public ::testing::Test {
 protected:
  StatusOr<std::vector<TensorType>> Infer(const std::string& type, std::vector<TensorType> inputs,
                                          const AttributeMap& attributes = {}) {
    return InferOp(registry_, type, std::move(inputs), attributes);
  }
  // The single output of a successful inference.
  TensorType Output(const std::string& type, std::vector<TensorType> inputs,
                    const AttributeMap& attributes = {}) {
    StatusOr<std::vector<TensorType>> outputs = Infer(type, std::move(inputs), attributes);
    EXPECT_TRUE(outputs.ok()) << outputs.status();
    return outputs.ok() && !outputs->empty() ? outputs->at(0) : TensorType{};
  }
  std::string Error(const std::string& type, std::vector<TensorType> inputs,
                    const AttributeMap& attributes = {}) {
    StatusOr<std::vector<TensorType>> outputs = Infer(type, std::move(inputs), attributes);
    EXPECT_FALSE(outputs.ok());
    return outputs.ok() ? "" : outputs.status().message();
  }

  OpRegistry registry_ = MakeStandardOps();
};

TEST_F(UserOpInference, MatmulMultipliesMByKWithKByN) {
  EXPECT_EQ(Output("matmul", {F32({8, 4}), F32({4, 3})}), F32({8, 3}));
}

TEST_F(UserOpInference, MatmulKeepsTheLeadingAxesOfA) {
  EXPECT_EQ(Output("matmul", {F32({2, 5, 4}), F32({4, 3})}), F32({2, 5, 3}));
}

TEST_F(UserOpInference, MatmulHonoursBothTransposes) {
  EXPECT_EQ(Output("matmul", {F32({4, 8}), F32({3, 4})}, TransposeAttributes(true, true)),
            F32({8, 3}));
}

TEST_F(UserOpInference, MatmulNamesBothShapesWhenInnerDimensionsDiffer) {
  EXPECT_THAT(Error("matmul", {F32({256, 1024}), F32({512, 10})}),
              HasSubstr("input 'a' has shape [256, 1024] (K = 1024) but input 'b' expects "
                        "K = 512 (b has shape [512, 10])"));
}

TEST_F(UserOpInference, MatmulRejectsInt32Inputs) {
  EXPECT_THAT(Error("matmul", {I32({2, 2}), F32({2, 2})}),
              HasSubstr("input 'a' must be float32, got int32[2, 2]"));
}

TEST_F(UserOpInference, MatmulWantsARankTwoRightOperand) {
  EXPECT_THAT(Error("matmul", {F32({2, 2}), F32({2, 2, 2})}),
              HasSubstr("input 'b' must have rank 2"));
}

TEST_F(UserOpInference, BatchMatmulMultipliesTheLastTwoAxes) {
  EXPECT_EQ(Output("batch_matmul", {F32({2, 3, 4, 5}), F32({2, 3, 5, 6})}), F32({2, 3, 4, 6}));
  EXPECT_EQ(
      Output("batch_matmul", {F32({2, 4, 5}), F32({2, 6, 5})}, TransposeAttributes(false, true)),
      F32({2, 4, 6}));
}

TEST_F(UserOpInference, BatchMatmulRejectsDifferentBatchAxes) {
  EXPECT_THAT(Error("batch_matmul", {F32({2, 4, 5}), F32({3, 5, 6})}),
              HasSubstr("identical batch axes"));
}

TEST_F(UserOpInference, AddBroadcastsLikeNumpy) {
  EXPECT_EQ(Output("add", {F32({4, 1, 3}), F32({5, 3})}), F32({4, 5, 3}));
  EXPECT_EQ(Output("sub", {F32({3}), F32({})}), F32({3}));
  EXPECT_EQ(Output("mul", {F32({2, 3}), F32({2, 3})}), F32({2, 3}));
}

TEST_F(UserOpInference, AddNamesTheAxisThatDoesNotBroadcast) {
  EXPECT_THAT(Error("add", {F32({2, 3}), F32({4})}),
              HasSubstr("input 'a' [2, 3] and input 'b' [4] do not broadcast: axis -1 has 3 "
                        "and 4"));
}

TEST_F(UserOpInference, ScaleKeepsItsInputType) {
  EXPECT_EQ(Output("scale", {F32({2, 3})}, Attributes("factor", 0.5)), F32({2, 3}));
}

TEST_F(UserOpInference, BiasAddChecksTheChannelCount) {
  EXPECT_EQ(Output("bias_add", {F32({8, 16}), F32({16})}), F32({8, 16}));
  EXPECT_THAT(Error("bias_add", {F32({8, 16}), F32({15})}),
              HasSubstr("input 'bias' has shape [15] but input 'x' [8, 16] has C = 16"));
}

TEST_F(UserOpInference, ActivationsKeepTheirInputType) {
  EXPECT_EQ(Output("relu", {F32({2, 3})}), F32({2, 3}));
  EXPECT_EQ(Output("gelu", {F32({7})}), F32({7}));
  EXPECT_EQ(Output("identity", {I32({4})}), I32({4}));
}

TEST_F(UserOpInference, CausalSoftmaxNeedsSquareTrailingAxes) {
  AttributeMap causal = Attributes("causal", true);
  EXPECT_EQ(Output("softmax", {F32({2, 4, 4})}, causal), F32({2, 4, 4}));
  EXPECT_THAT(Error("softmax", {F32({2, 4, 5})}, causal), HasSubstr("[T, T], got [2, 4, 5]"));
  EXPECT_EQ(Output("softmax", {F32({2, 5})}), F32({2, 5}));
}

TEST_F(UserOpInference, LayerNormNeedsGammaAndBetaOfTheChannelCount) {
  EXPECT_EQ(Output("layer_norm", {F32({2, 3, 8}), F32({8}), F32({8})}), F32({2, 3, 8}));
  EXPECT_THAT(Error("layer_norm", {F32({2, 8}), F32({4}), F32({8})}),
              HasSubstr("input 'gamma' has shape [4] but input 'x' [2, 8] needs [8]"));
}

TEST_F(UserOpInference, ReductionsDropOrKeepTheReducedAxes) {
  AttributeMap middle = Attributes("axes", std::vector<int64_t>{1});
  EXPECT_EQ(Output("reduce_sum", {F32({2, 3, 4})}, middle), F32({2, 4}));
  middle.Set("keepdims", true);
  EXPECT_EQ(Output("reduce_mean", {F32({2, 3, 4})}, middle), F32({2, 1, 4}));
  EXPECT_EQ(Output("reduce_mean", {F32({2, 3, 4})}), F32({}));
  EXPECT_EQ(Output("reduce_sum", {F32({2, 3, 4})}, Attributes("axes", std::vector<int64_t>{-1})),
            F32({2, 3}));
}

TEST_F(UserOpInference, ReductionsRejectBadAxes) {
  EXPECT_THAT(Error("reduce_sum", {F32({2, 3})}, Attributes("axes", std::vector<int64_t>{2})),
              HasSubstr("attribute 'axes': axis 2 is out of range for rank 2"));
  EXPECT_THAT(Error("reduce_sum", {F32({2, 3})}, Attributes("axes", std::vector<int64_t>{1, -1})),
              HasSubstr("axis -1 appears twice"));
}

TEST_F(UserOpInference, ReshapeInfersOneMinusOne) {
  EXPECT_EQ(Output("reshape", {F32({4, 6})}, Attributes("shape", std::vector<int64_t>{-1, 2, 3})),
            F32({4, 2, 3}));
}

TEST_F(UserOpInference, ReshapeRejectsAShapeOfAnotherSize) {
  EXPECT_THAT(Error("reshape", {F32({4, 6})}, Attributes("shape", std::vector<int64_t>{5, -1})),
              HasSubstr("attribute 'shape' [5, -1] cannot hold input 'x' float32[4, 6] (24 "
                        "elements)"));
  EXPECT_THAT(Error("reshape", {F32({4, 6})}, Attributes("shape", std::vector<int64_t>{-1, -1})),
              HasSubstr("more than one -1"));
}

TEST_F(UserOpInference, TransposePermutesAxes) {
  EXPECT_EQ(Output("transpose", {F32({2, 3, 4, 5})},
                   Attributes("perm", std::vector<int64_t>{0, 2, 1, 3})),
            F32({2, 4, 3, 5}));
  EXPECT_THAT(Error("transpose", {F32({2, 3})}, Attributes("perm", std::vector<int64_t>{0, 0})),
              HasSubstr("attribute 'perm' [0, 0] is not a permutation"));
}

TEST_F(UserOpInference, EmbeddingAppendsTheChannelAxisToTheIds) {
  EXPECT_EQ(Output("embedding", {F32({10, 4}), I32({2, 3})}), F32({2, 3, 4}));
  EXPECT_THAT(Error("embedding", {F32({10, 4}), F32({2, 3})}),
              HasSubstr("input 'ids' must be int32"));
}

TEST_F(UserOpInference, CrossEntropyGivesOneLossPerRow) {
  EXPECT_EQ(Output("softmax_cross_entropy", {F32({2, 3, 10}), I32({2, 3})}), F32({2, 3}));
  EXPECT_THAT(Error("softmax_cross_entropy", {F32({8, 10}), I32({4})}),
              HasSubstr("input 'labels' has shape [4] but input 'logits' [8, 10] needs [8]"));
}

TEST_F(UserOpInference, AccuracyIsAScalar) {
  EXPECT_EQ(Output("accuracy", {F32({8, 10}), I32({8})}), F32({}));
}

TEST_F(UserOpInference, OpsCountTheirWorkForTheCostModel) {
  const OpDefinition* matmul = registry_.Find("matmul");
  std::vector<TensorType> inputs = {F32({8, 4}), F32({4, 3})};
  std::vector<TensorType> outputs = {F32({8, 3})};
  AttributeMap attributes = TransposeAttributes(false, false);
  OpCost cost = matmul->cost(OpSignature{inputs, outputs, attributes});
  EXPECT_DOUBLE_EQ(cost.flops, 2.0 * 8 * 3 * 4);
  EXPECT_DOUBLE_EQ(cost.bytes, 4.0 * (32 + 12 + 24));
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
