// The structure autodiff and the training passes build on small graphs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/testing/compiler_test_util.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// x [4, 3] -> fc1 (w1 [3, 5]) -> relu -> fc2 (w2 [5, 2]) -> cross entropy with labels -> mean.
std::string TwoLayerJob(const std::string& extra_w2 = "", int pieces_per_step = 1,
                        const std::string& optimizer = "sgd { learning_rate: 0.1 }") {
  return R"(
    name: "two_layers"
    source {
      name: "data"
      output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 3 }
      output { name: "labels" dtype: DATA_TYPE_INT32 }
      synthetic { seed: 1 int_high: 2 }
    }
    variable { name: "w1" dtype: DATA_TYPE_FLOAT32 dims: [3, 5]
               initializer { normal { stddev: 0.1 seed: 1 } } }
    variable { name: "w2" dtype: DATA_TYPE_FLOAT32 dims: [5, 2]
               initializer { normal { stddev: 0.1 seed: 2 } } )" +
         extra_w2 + R"( }
    op { name: "fc1" type: "matmul" input: ["x", "w1"] output: "h" }
    op { name: "act" type: "relu" input: "h" output: "a" }
    op { name: "fc2" type: "matmul" input: ["a", "w2"] output: "logits" }
    op { name: "xent" type: "softmax_cross_entropy" input: ["logits", "labels"] output: "l" }
    op { name: "mean" type: "reduce_mean" input: "l" output: "loss" }
    train {
      loss: "loss"
      optimizer { )" +
         optimizer + R"( }
      steps: 2
      micro_batch_size: 4
      micro_batches_per_step: )" +
         std::to_string(pieces_per_step) + R"(
    }
  )";
}

TEST(Autodiff, SeedsTheLossGradientWithAFillOfOne) {
  StagedCompilation staged(TwoLayerJob());
  ASSERT_TRUE(staged.RunThrough("autodiff").ok());
  const LogicalOp& seed = staged.op("loss.grad");
  EXPECT_EQ(seed.type, "fill");
  EXPECT_EQ(seed.attributes.ToString(), "{shape: [], value: 1}");
  EXPECT_EQ(staged.InputNames("mean.grad_x.scale"), "loss.grad");
  EXPECT_EQ(staged.op("mean.grad_x.scale").attributes.GetFloat("factor"), 0.25);
}

TEST(Autodiff, BuildsTheBackwardChainWithReadableNames) {
  StagedCompilation staged(TwoLayerJob());
  ASSERT_TRUE(staged.RunThrough("autodiff").ok());
  EXPECT_EQ(staged.InputNames("xent.grad_logits"), "mean.grad_x, logits, labels");
  EXPECT_EQ(staged.InputNames("fc2.grad_b"), "a, xent.grad_logits");
  EXPECT_EQ(staged.op("fc2.grad_b").attributes.ToString(),
            "{transpose_a: true, transpose_b: false}");
  EXPECT_EQ(staged.InputNames("fc2.grad_a"), "xent.grad_logits, w2");
  EXPECT_EQ(staged.InputNames("act.grad_x"), "fc2.grad_a, a");
  EXPECT_EQ(staged.InputNames("fc1.grad_b"), "x, act.grad_x");
  EXPECT_EQ(staged.op("fc1.grad_b").gradient_of, "fc1");
}

TEST(Autodiff, PrunesGradientsNoTrainableVariableNeeds) {
  StagedCompilation staged(TwoLayerJob());
  ASSERT_TRUE(staged.RunThrough("autodiff").ok());
  EXPECT_FALSE(staged.has_op("fc1.grad_a"));  // d(x): x is data.
  for (const LogicalOp& op : staged.graph().ops()) {
    if (op.gradient_of.empty()) continue;
    for (TensorId output : op.outputs) {
      EXPECT_NE(staged.graph().tensor(output).type.dtype, DType::kInt32) << op.name;
    }
  }
}

TEST(Autodiff, GivesFrozenVariablesNeitherGradientNorUpdate) {
  StagedCompilation staged(TwoLayerJob("frozen: true"));
  ASSERT_TRUE(staged.RunThrough("optimizer").ok());
  EXPECT_FALSE(staged.has_op("fc2.grad_b"));
  EXPECT_TRUE(staged.has_op("fc2.grad_a"));  // Still on the way to w1.
  EXPECT_THAT(staged.OpsOfType("sgd_update"), ElementsAre("w1.update"));
  EXPECT_EQ(staged.compilation().variable_gradients.size(), 1u);
}

TEST(Autodiff, SumsTheContributionsOfATensorReadTwiceWithAddN) {
  StagedCompilation staged(R"(
    source { name: "data" output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 3 }
             synthetic { seed: 1 } }
    variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [3, 3]
               initializer { constant { value: 0.5 } } }
    op { name: "fc" type: "matmul" input: ["x", "w"] output: "h" }
    op { name: "left" type: "relu" input: "h" output: "a" }
    op { name: "right" type: "gelu" input: "h" output: "b" }
    op { name: "join" type: "mul" input: ["a", "b"] output: "c" }
    op { name: "mean" type: "reduce_mean" input: "c" output: "loss" }
    train { loss: "loss" optimizer { sgd { learning_rate: 0.1 } } steps: 1 micro_batch_size: 2 }
  )");
  ASSERT_TRUE(staged.RunThrough("autodiff").ok());
  EXPECT_EQ(staged.op("h.grad").type, "add_n");
  EXPECT_EQ(staged.InputNames("h.grad"), "right.grad_x, left.grad_x");
  EXPECT_EQ(staged.InputNames("fc.grad_b"), "x, h.grad");
  EXPECT_EQ(staged.InputNames("join.grad_a"), "mean.grad_x, b");
}

TEST(Autodiff, SumsATiedWeightsGradientsAndUndoesBroadcasts) {
  StagedCompilation staged(R"(
    source { name: "data" output { name: "ids" dtype: DATA_TYPE_INT32 sample_dims: 4 }
             output { name: "targets" dtype: DATA_TYPE_INT32 sample_dims: 4 }
             synthetic { seed: 1 int_high: 6 } }
    variable { name: "table" dtype: DATA_TYPE_FLOAT32 dims: [6, 8]
               initializer { normal { stddev: 0.1 seed: 3 } } }
    variable { name: "position" dtype: DATA_TYPE_FLOAT32 dims: [4, 8]
               initializer { constant { value: 0 } } }
    op { name: "embed" type: "embedding" input: ["table", "ids"] output: "e" }
    op { name: "place" type: "add" input: ["e", "position"] output: "p" }
    op { name: "logits" type: "matmul" input: ["p", "table"] output: "z"
         attr { name: "transpose_b" bool: true } }
    op { name: "xent" type: "softmax_cross_entropy" input: ["z", "targets"] output: "l" }
    op { name: "mean" type: "reduce_mean" input: "l" output: "loss" }
    train { loss: "loss" optimizer { adam { learning_rate: 0.01 } } steps: 1
            micro_batch_size: 2 }
  )");
  ASSERT_TRUE(staged.RunThrough("autodiff").ok());
  EXPECT_EQ(staged.InputNames("table.grad"), "logits.grad_b, embed.grad_table");
  EXPECT_EQ(staged.op("embed.grad_table").attributes.GetInt("num_embeddings"), 6);
  EXPECT_EQ(staged.op("place.grad_b").type, "sum_to_shape");
  EXPECT_EQ(staged.tensor("place.grad_b").type, F32({4, 8}));
  EXPECT_FALSE(staged.has_op("place.grad_a"));  // Same shape: dp itself.
  EXPECT_EQ(staged.InputNames("embed.grad_table"), "logits.grad_a, ids");
  EXPECT_EQ(staged.InputNames("logits.grad_b.flatten_a"), "p");
  EXPECT_EQ(staged.tensor("logits.grad_b").type, F32({6, 8}));
}

TEST(Autodiff, NamesAnOpWithoutGradientBetweenTheVariablesAndTheLoss) {
  StagedCompilation staged(R"(
    source { name: "data" output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 3 }
             output { name: "labels" dtype: DATA_TYPE_INT32 } synthetic { seed: 1 int_high: 3 } }
    variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [3, 3]
               initializer { constant { value: 0.5 } } }
    op { name: "fc" type: "matmul" input: ["x", "w"] output: "h" }
    op {
      name: "hit_rate"
      type: "accuracy" input: ["h", "labels"] output: "loss" }
    train { loss: "loss" optimizer { sgd { learning_rate: 0.1 } } steps: 1 micro_batch_size: 2 }
  )");
  Status status = staged.RunThrough("autodiff");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "test.pbtxt:7: op 'hit_rate': type 'accuracy' has no gradient, but it lies between "
            "trainable variables and the loss 'loss'");
}

TEST(Autodiff, RejectsATrainableVariableTheLossIgnores) {
  StagedCompilation staged(TwoLayerJob() + R"(
    variable { name: "unused" dtype: DATA_TYPE_FLOAT32 dims: [2]
               initializer { constant { value: 0 } } })");
  Status status = staged.RunThrough("autodiff");
  EXPECT_THAT(status.message(), HasSubstr("variable 'unused': the loss 'loss' does not depend "
                                          "on it; mark it `frozen: true`"));
}

TEST(AccumulateGradients, AddsOneAccumulatePerVariableOnlyWithSeveralPieces) {
  StagedCompilation single(TwoLayerJob("", 1));
  ASSERT_TRUE(single.RunThrough("accumulate_gradients").ok());
  EXPECT_THAT(single.OpsOfType("accumulate"), IsEmpty());

  StagedCompilation several(TwoLayerJob("", 4));
  ASSERT_TRUE(several.RunThrough("optimizer").ok());
  EXPECT_THAT(several.OpsOfType("accumulate"),
              ElementsAre("w1.grad_accumulate", "w2.grad_accumulate"));
  EXPECT_EQ(several.InputNames("w1.grad_accumulate"), "fc1.grad_b");
  EXPECT_EQ(several.InputNames("w1.update"), "w1.grad_accumulated, w1");
  EXPECT_EQ(several.op("w1.update").attributes.GetFloat("gradient_scale"), 0.25);
}

TEST(Optimizer, ResolvesAdamDefaultsIntoTheUpdateAttributes) {
  StagedCompilation staged(TwoLayerJob("", 2, "adam { learning_rate: 0.01 weight_decay: 0.1 }"));
  ASSERT_TRUE(staged.RunThrough("optimizer").ok());
  EXPECT_EQ(staged.op("w2.update").type, "adam_update");
  EXPECT_EQ(staged.op("w2.update").attributes.ToString(),
            "{learning_rate: 0.01, beta1: 0.9, beta2: 0.999, epsilon: 1e-08, "
            "weight_decay: 0.1, gradient_scale: 0.5}");
}

TEST(Optimizer, NamesABadSettingAndTheTrainBlock) {
  StagedCompilation staged(TwoLayerJob("", 1, "sgd { learning_rate: 0.1 momentum: 1.5 }"));
  Status status = staged.RunThrough("optimizer");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("train.optimizer.sgd.momentum must be in [0, 1), got 1.5"));
}

TEST(SeparateRepeatedInputs, GivesAnOpThatReadsATensorTwiceACopy) {
  StagedCompilation staged(R"(
    source { name: "data" output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 3 }
             synthetic { seed: 1 } }
    variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [3] initializer { constant { value: 1 } } }
    op { name: "shift" type: "add" input: ["x", "w"] output: "y" }
    op { name: "twice" type: "add" input: ["y", "y"] output: "z" }
    op { name: "mean" type: "reduce_mean" input: "z" output: "loss" }
    train { loss: "loss" optimizer { sgd { learning_rate: 0.1 } } steps: 1 micro_batch_size: 2 }
  )");
  ASSERT_TRUE(staged.RunThrough("separate_repeated_inputs").ok());
  EXPECT_EQ(staged.InputNames("twice"), "y, twice.copy_b");
  EXPECT_EQ(staged.op("twice.copy_b").type, "identity");
  // Both inputs of `twice` get dz itself as gradient; their sum reads a copy too.
  EXPECT_EQ(staged.InputNames("y.grad"), "mean.grad_x, y.grad.copy_x1");
}

TEST(InferPeriods, MakesWhatOnlyReadsPerStepValuesFirePerStep) {
  StagedCompilation staged(TwoLayerJob("", 3));
  ASSERT_TRUE(staged.RunThrough("infer_periods").ok());
  EXPECT_EQ(staged.op("w1").period, 3);
  EXPECT_EQ(staged.op("loss.grad").period, 3);
  EXPECT_EQ(staged.op("mean.grad_x.scale").period, 3);
  EXPECT_EQ(staged.op("fc1").period, 1);
  EXPECT_EQ(staged.op("w1.grad_accumulate").period, 1);
  EXPECT_EQ(staged.tensor("w1.grad_accumulated").period, 3);
  EXPECT_EQ(staged.op("w1.update").period, 3);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
