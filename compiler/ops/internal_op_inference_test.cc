// Inference of the internal ops (gradients, helpers, optimizer and actor-kind ops).
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

class InternalOpInference : public ::testing::Test {
 protected:
  std::vector<TensorType> Outputs(const std::string& type, std::vector<TensorType> inputs,
                                  const AttributeMap& attributes = {}) {
    StatusOr<std::vector<TensorType>> outputs =
        InferOp(registry_, type, std::move(inputs), attributes);
    EXPECT_TRUE(outputs.ok()) << outputs.status();
    return outputs.ok() ? *outputs : std::vector<TensorType>{};
  }
  std::string Error(const std::string& type, std::vector<TensorType> inputs,
                    const AttributeMap& attributes = {}) {
    StatusOr<std::vector<TensorType>> outputs =
        InferOp(registry_, type, std::move(inputs), attributes);
    EXPECT_FALSE(outputs.ok());
    return outputs.ok() ? "" : outputs.status().message();
  }

  OpRegistry registry_ = MakeStandardOps();
};

TEST_F(InternalOpInference, GradientPairsReturnTheTypeOfDy) {
  EXPECT_THAT(Outputs("relu_grad", {F32({2, 3}), F32({2, 3})}), ElementsAre(F32({2, 3})));
  EXPECT_THAT(Outputs("gelu_grad", {F32({5}), F32({5})}), ElementsAre(F32({5})));
  EXPECT_THAT(Outputs("softmax_grad", {F32({2, 4}), F32({2, 4})}), ElementsAre(F32({2, 4})));
  EXPECT_THAT(Error("relu_grad", {F32({2, 3}), F32({3})}),
              HasSubstr("input 'y' must be float32[2, 3] like input 'dy', got float32[3]"));
}

TEST_F(InternalOpInference, BiasAddGradReducesToTheChannels) {
  EXPECT_THAT(Outputs("bias_add_grad", {F32({2, 3, 16})}), ElementsAre(F32({16})));
}

TEST_F(InternalOpInference, LayerNormGradGivesThreeGradients) {
  EXPECT_THAT(Outputs("layer_norm_grad", {F32({4, 8}), F32({4, 8}), F32({8})}),
              ElementsAre(F32({4, 8}), F32({8}), F32({8})));
}

TEST_F(InternalOpInference, EmbeddingGradIsShapedLikeTheTable) {
  EXPECT_THAT(Outputs("embedding_grad", {F32({2, 3, 4}), I32({2, 3})},
                      Attributes("num_embeddings", int64_t{10})),
              ElementsAre(F32({10, 4})));
  EXPECT_THAT(Error("embedding_grad", {F32({2, 4}), I32({2, 3})},
                    Attributes("num_embeddings", int64_t{10})),
              HasSubstr("input 'dy' [2, 4] must be input 'ids' [2, 3] plus a channel axis"));
}

TEST_F(InternalOpInference, CrossEntropyGradIsShapedLikeTheLogits) {
  EXPECT_THAT(Outputs("softmax_cross_entropy_grad", {F32({8}), F32({8, 10}), I32({8})}),
              ElementsAre(F32({8, 10})));
}

TEST_F(InternalOpInference, FillMakesTheShapeItIsGiven) {
  AttributeMap attributes;
  attributes.Set("shape", std::vector<int64_t>{});
  attributes.Set("value", 1.0);
  EXPECT_THAT(Outputs("fill", {}, attributes), ElementsAre(F32({})));
  attributes.Set("shape", std::vector<int64_t>{2, 0});
  EXPECT_THAT(Error("fill", {}, attributes), HasSubstr("extents must be >= 1"));
}

TEST_F(InternalOpInference, AddNWantsInputsOfOneType) {
  EXPECT_THAT(Outputs("add_n", {F32({3}), F32({3}), F32({3})}), ElementsAre(F32({3})));
  EXPECT_THAT(Error("add_n", {F32({3}), F32({4})}), HasSubstr("input 'x1' must be float32[3]"));
}

TEST_F(InternalOpInference, SumToShapeUndoesABroadcast) {
  AttributeMap attributes = Attributes("shape", std::vector<int64_t>{1, 3});
  EXPECT_THAT(Outputs("sum_to_shape", {F32({4, 5, 3})}, attributes), ElementsAre(F32({1, 3})));
  attributes = Attributes("shape", std::vector<int64_t>{2});
  EXPECT_THAT(Error("sum_to_shape", {F32({4, 3})}, attributes),
              HasSubstr("attribute 'shape' [2] does not broadcast to input 'x' [4, 3]"));
}

TEST_F(InternalOpInference, BroadcastAxesAcceptsDroppedOrUnitAxes) {
  AttributeMap attributes;
  attributes.Set("shape", std::vector<int64_t>{2, 3, 4});
  attributes.Set("axes", std::vector<int64_t>{1});
  EXPECT_THAT(Outputs("broadcast_axes", {F32({2, 4})}, attributes), ElementsAre(F32({2, 3, 4})));
  EXPECT_THAT(Outputs("broadcast_axes", {F32({2, 1, 4})}, attributes), ElementsAre(F32({2, 3, 4})));
  EXPECT_THAT(Error("broadcast_axes", {F32({3, 4})}, attributes),
              HasSubstr("must be [2, 4] or [2, 1, 4]"));
}

TEST_F(InternalOpInference, UpdatesProduceNothingAndCheckTheirSettings) {
  AttributeMap sgd = Attributes("learning_rate", 0.1);
  EXPECT_TRUE(Outputs("sgd_update", {F32({4, 2}), F32({4, 2})}, sgd).empty());
  EXPECT_THAT(Error("sgd_update", {F32({4, 3}), F32({4, 2})}, sgd),
              HasSubstr("input 'gradient' must be float32[4, 2] like input 'weight'"));
  sgd.Set("momentum", 1.0);
  EXPECT_THAT(Error("sgd_update", {F32({2}), F32({2})}, sgd),
              HasSubstr("attribute 'momentum' must be in [0, 1), got 1"));
  AttributeMap adam = Attributes("learning_rate", 0.1);
  adam.Set("beta2", 1.5);
  EXPECT_THAT(Error("adam_update", {F32({2}), F32({2})}, adam), HasSubstr("'beta2'"));
}

TEST_F(InternalOpInference, UpdatesKeepOneOrTwoFloatsOfStatePerWeight) {
  std::vector<TensorType> inputs = {F32({4, 8}), F32({4, 8})};
  std::vector<TensorType> outputs;
  AttributeMap attributes;
  OpSignature signature{inputs, outputs, attributes};
  EXPECT_EQ(registry_.Find("sgd_update")->state_bytes(signature), 4 * 32);
  EXPECT_EQ(registry_.Find("adam_update")->state_bytes(signature), 8 * 32);
  EXPECT_EQ(registry_.Find("adam_update")->in_place_input, 1);
}

TEST_F(InternalOpInference, AccumulateAndSinkCheckTheirValue) {
  EXPECT_THAT(Outputs("accumulate", {F32({3, 3})}), ElementsAre(F32({3, 3})));
  EXPECT_TRUE(Outputs("sink", {F32({})}).empty());
  EXPECT_THAT(Error("sink", {F32({2})}), HasSubstr("input 'value' must have rank 0"));
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
