// The reference kernels on small inputs whose results are worked out by hand, and their
// handling of bad attributes and bad data. Values are exact in double unless a tolerance says
// otherwise (transcendental results: 1e-12).
#include "reference/kernels/reference_kernels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "reference/kernels/testing/reference_kernel_runner.h"

namespace softwire {
namespace reference {
namespace {

using ::testing::ElementsAre;

constexpr double kTranscendental = 1e-12;

class ReferenceKernelsTest : public ::testing::Test {
 protected:
  std::vector<ReferenceTensor> Apply(const std::string& op_type,
                                     const std::vector<proto::Attribute>& attributes,
                                     const std::vector<ReferenceTensor>& inputs,
                                     const std::vector<Shape>& output_shapes) {
    StatusOr<std::vector<ReferenceTensor>> outputs =
        RunReferenceKernel(table_, op_type, attributes, inputs, output_shapes);
    EXPECT_TRUE(outputs.ok()) << outputs.status();
    return outputs.ok() ? *outputs : std::vector<ReferenceTensor>(output_shapes.size());
  }

  Status RunStatus(const std::string& op_type, const std::vector<proto::Attribute>& attributes,
                   const std::vector<ReferenceTensor>& inputs,
                   const std::vector<Shape>& output_shapes) {
    return RunReferenceKernel(table_, op_type, attributes, inputs, output_shapes).status();
  }

  const ReferenceKernelTable table_ = MakeReferenceKernels();
};

TEST_F(ReferenceKernelsTest, MatmulMultipliesWithAndWithoutTransposes) {
  ReferenceTensor a = FloatTensor(Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  ReferenceTensor b = FloatTensor(Shape({3, 2}), {7, 8, 9, 10, 11, 12});
  EXPECT_THAT(Apply("matmul", {}, {a, b}, {Shape({2, 2})})[0].values,
              ElementsAre(58, 64, 139, 154));
  ReferenceTensor a_t = FloatTensor(Shape({3, 2}), {1, 4, 2, 5, 3, 6});
  ReferenceTensor b_t = FloatTensor(Shape({2, 3}), {7, 9, 11, 8, 10, 12});
  EXPECT_THAT(
      Apply("matmul", {BoolAttribute("transpose_a", true), BoolAttribute("transpose_b", true)},
            {a_t, b_t}, {Shape({2, 2})})[0]
          .values,
      ElementsAre(58, 64, 139, 154));
}

TEST_F(ReferenceKernelsTest, BatchMatmulMultipliesEachBatchEntry) {
  ReferenceTensor a = FloatTensor(Shape({2, 1, 2}), {1, 2, 3, 4});
  ReferenceTensor b = FloatTensor(Shape({2, 2, 1}), {5, 6, 7, 8});
  EXPECT_THAT(Apply("batch_matmul", {}, {a, b}, {Shape({2, 1, 1})})[0].values, ElementsAre(17, 53));
}

TEST_F(ReferenceKernelsTest, BinaryOpsBroadcastLikeNumpy) {
  ReferenceTensor a = FloatTensor(Shape({2, 1}), {1, 2});
  ReferenceTensor b = FloatTensor(Shape({3}), {10, 20, 30});
  EXPECT_THAT(Apply("add", {}, {a, b}, {Shape({2, 3})})[0].values,
              ElementsAre(11, 21, 31, 12, 22, 32));
  EXPECT_THAT(Apply("sub", {}, {a, b}, {Shape({2, 3})})[0].values,
              ElementsAre(-9, -19, -29, -8, -18, -28));
  EXPECT_THAT(Apply("mul", {}, {a, b}, {Shape({2, 3})})[0].values,
              ElementsAre(10, 20, 30, 20, 40, 60));
  EXPECT_FALSE(RunStatus("add", {}, {FloatTensor(Shape({2}), {1, 2}), b}, {Shape({3})}).ok());
}

TEST_F(ReferenceKernelsTest, SimpleElementwiseOpsComputeTheirFormulas) {
  ReferenceTensor x = FloatTensor(Shape({4}), {-2, -0.5, 0, 3});
  EXPECT_THAT(Apply("scale", {FloatAttribute("factor", 2)}, {x}, {Shape({4})})[0].values,
              ElementsAre(-4, -1, 0, 6));
  EXPECT_THAT(Apply("identity", {}, {x}, {Shape({4})})[0].values, ElementsAre(-2, -0.5, 0, 3));
  EXPECT_THAT(Apply("relu", {}, {x}, {Shape({4})})[0].values, ElementsAre(0, 0, 0, 3));
  EXPECT_THAT(
      Apply("relu_grad", {}, {FloatTensor(Shape({4}), {1, 2, 3, 4}), x}, {Shape({4})})[0].values,
      ElementsAre(0, 0, 0, 4));
  EXPECT_THAT(Apply("reshape", {IntsAttribute("shape", {2, -1})}, {x}, {Shape({2, 2})})[0].values,
              ElementsAre(-2, -0.5, 0, 3));
  EXPECT_THAT(Apply("fill", {IntsAttribute("shape", {2}), FloatAttribute("value", 1.5)}, {},
                    {Shape({2})})[0]
                  .values,
              ElementsAre(1.5, 1.5));
  EXPECT_THAT(Apply("add_n", {}, {x, x, x}, {Shape({4})})[0].values, ElementsAre(-6, -1.5, 0, 9));
}

TEST_F(ReferenceKernelsTest, GeluIsZeroAtZeroAndApproachesReluInTheTails) {
  ReferenceTensor x = FloatTensor(Shape({3}), {0, 10, -10});
  std::vector<double> y = Apply("gelu", {}, {x}, {Shape({3})})[0].values;
  EXPECT_EQ(y[0], 0);
  EXPECT_NEAR(y[1], 10, kTranscendental);
  EXPECT_NEAR(y[2], 0, kTranscendental);
  // gelu'(0) = 0.5 exactly.
  EXPECT_EQ(Apply("gelu_grad", {}, {FloatTensor(Shape({1}), {1}), FloatTensor(Shape({1}), {0})},
                  {Shape({1})})[0]
                .values[0],
            0.5);
}

TEST_F(ReferenceKernelsTest, BiasAddAndItsGradientWorkPerChannel) {
  ReferenceTensor x = FloatTensor(Shape({2, 2}), {1, 2, 3, 4});
  ReferenceTensor bias = FloatTensor(Shape({2}), {10, 20});
  EXPECT_THAT(Apply("bias_add", {}, {x, bias}, {Shape({2, 2})})[0].values,
              ElementsAre(11, 22, 13, 24));
  EXPECT_THAT(Apply("bias_add_grad", {}, {x}, {Shape({2})})[0].values, ElementsAre(4, 6));
}

TEST_F(ReferenceKernelsTest, SoftmaxNormalisesRowsAndMasksTheFutureWhenCausal) {
  ReferenceTensor x = FloatTensor(Shape({1, 2}), {0, std::log(2.0)});
  std::vector<double> y = Apply("softmax", {}, {x}, {Shape({1, 2})})[0].values;
  EXPECT_NEAR(y[0], 1.0 / 3, kTranscendental);
  EXPECT_NEAR(y[1], 2.0 / 3, kTranscendental);
  ReferenceTensor square = FloatTensor(Shape({2, 2}), {5, 100, 0, std::log(3.0)});
  std::vector<double> causal =
      Apply("softmax", {BoolAttribute("causal", true)}, {square}, {Shape({2, 2})})[0].values;
  EXPECT_EQ(causal[0], 1.0);
  EXPECT_EQ(causal[1], 0.0);
  EXPECT_NEAR(causal[2], 0.25, kTranscendental);
  EXPECT_NEAR(causal[3], 0.75, kTranscendental);
}

TEST_F(ReferenceKernelsTest, SoftmaxCrossEntropyIsLogSumExpMinusTheLabelLogit) {
  ReferenceTensor logits = FloatTensor(Shape({2, 2}), {0, 0, 1000, 0});
  ReferenceTensor labels = IntTensor(Shape({2}), {1, 0});
  std::vector<double> loss =
      Apply("softmax_cross_entropy", {}, {logits, labels}, {Shape({2})})[0].values;
  EXPECT_NEAR(loss[0], std::log(2.0), kTranscendental);
  EXPECT_NEAR(loss[1], 0.0, kTranscendental);  // Stable at large logits.
  std::vector<double> dlogits =
      Apply("softmax_cross_entropy_grad", {}, {FloatTensor(Shape({2}), {2, 1}), logits, labels},
            {Shape({2, 2})})[0]
          .values;
  EXPECT_NEAR(dlogits[0], 1.0, kTranscendental);   // 2 * (0.5 - 0)
  EXPECT_NEAR(dlogits[1], -1.0, kTranscendental);  // 2 * (0.5 - 1)
}

TEST_F(ReferenceKernelsTest, AccuracyCountsTheFirstMaximumOnTies) {
  ReferenceTensor logits = FloatTensor(Shape({4, 3}), {1, 3, 3, 0, 0, 0, 5, 1, 2, 0, 1, 0});
  ReferenceTensor labels = IntTensor(Shape({4}), {1, 2, 0, 1});
  EXPECT_THAT(Apply("accuracy", {}, {logits, labels}, {Shape()})[0].values, ElementsAre(0.75));
}

TEST_F(ReferenceKernelsTest, LayerNormStandardisesRowsThenScalesAndShifts) {
  ReferenceTensor x = FloatTensor(Shape({1, 3}), {1, 2, 3});
  ReferenceTensor gamma = FloatTensor(Shape({3}), {1, 1, 2});
  ReferenceTensor beta = FloatTensor(Shape({3}), {0, 5, 0});
  std::vector<double> y =
      Apply("layer_norm", {FloatAttribute("epsilon", 0)}, {x, gamma, beta}, {Shape({1, 3})})[0]
          .values;
  const double unit = std::sqrt(1.5);  // (x - 2) / sqrt(2/3)
  EXPECT_NEAR(y[0], -unit, kTranscendental);
  EXPECT_NEAR(y[1], 5, kTranscendental);
  EXPECT_NEAR(y[2], 2 * unit, kTranscendental);
}

TEST_F(ReferenceKernelsTest, ReductionsSumOverTheirAxes) {
  ReferenceTensor x = FloatTensor(Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(Apply("reduce_sum", {IntsAttribute("axes", {0})}, {x}, {Shape({3})})[0].values,
              ElementsAre(5, 7, 9));
  EXPECT_THAT(Apply("reduce_sum", {}, {x}, {Shape()})[0].values, ElementsAre(21));
  EXPECT_THAT(Apply("reduce_mean", {IntsAttribute("axes", {-1}), BoolAttribute("keepdims", true)},
                    {x}, {Shape({2, 1})})[0]
                  .values,
              ElementsAre(2, 5));
  EXPECT_THAT(
      Apply("sum_to_shape", {IntsAttribute("shape", {1, 3})}, {x}, {Shape({1, 3})})[0].values,
      ElementsAre(5, 7, 9));
  EXPECT_THAT(Apply("broadcast_axes", {IntsAttribute("shape", {2, 3}), IntsAttribute("axes", {1})},
                    {FloatTensor(Shape({2}), {7, 8})}, {Shape({2, 3})})[0]
                  .values,
              ElementsAre(7, 7, 7, 8, 8, 8));
}

TEST_F(ReferenceKernelsTest, TransposePermutesAxes) {
  ReferenceTensor x = FloatTensor(Shape({2, 3}), {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(Apply("transpose", {IntsAttribute("perm", {1, 0})}, {x}, {Shape({3, 2})})[0].values,
              ElementsAre(1, 4, 2, 5, 3, 6));
}

TEST_F(ReferenceKernelsTest, EmbeddingGathersRowsAndItsGradientAddsThemBack) {
  ReferenceTensor table = FloatTensor(Shape({3, 2}), {0, 1, 10, 11, 20, 21});
  ReferenceTensor ids = IntTensor(Shape({3}), {2, 0, 2});
  EXPECT_THAT(Apply("embedding", {}, {table, ids}, {Shape({3, 2})})[0].values,
              ElementsAre(20, 21, 0, 1, 20, 21));
  ReferenceTensor dy = FloatTensor(Shape({3, 2}), {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(
      Apply("embedding_grad", {IntAttribute("num_embeddings", 3)}, {dy, ids}, {Shape({3, 2})})[0]
          .values,
      ElementsAre(3, 4, 0, 0, 6, 8));
}

TEST_F(ReferenceKernelsTest, SgdWithMomentumKeepsAVelocity) {
  std::vector<double> state(2, 0.0);
  std::vector<proto::Attribute> attributes = {FloatAttribute("learning_rate", 0.5),
                                              FloatAttribute("momentum", 0.9)};
  ReferenceTensor gradient = FloatTensor(Shape({2}), {1, -2});
  std::vector<ReferenceTensor> weight = {FloatTensor(Shape({2}), {10, 20})};
  for (int64_t step = 1; step <= 2; ++step) {
    StatusOr<std::vector<ReferenceTensor>> updated = RunReferenceKernel(
        table_, "sgd_update", attributes, {gradient, weight[0]}, {}, &state, step, weight);
    ASSERT_TRUE(updated.ok()) << updated.status();
    weight = *updated;
  }
  // v1 = g, w1 = w0 - 0.5 g; v2 = 1.9 g, w2 = w1 - 0.95 g.
  EXPECT_THAT(weight[0].values, ElementsAre(10 - 1.45, 20 + 2.9));
  EXPECT_THAT(state, ElementsAre(1.9, -3.8));
}

TEST_F(ReferenceKernelsTest, AdamsFirstStepMovesEachWeightByAboutTheLearningRate) {
  std::vector<double> state(4, 0.0);
  ReferenceTensor gradient = FloatTensor(Shape({2}), {0.3, -4});
  std::vector<ReferenceTensor> weight = {FloatTensor(Shape({2}), {1, 1})};
  StatusOr<std::vector<ReferenceTensor>> updated = RunReferenceKernel(
      table_, "adam_update", {FloatAttribute("learning_rate", 0.01), FloatAttribute("epsilon", 0)},
      {gradient, weight[0]}, {}, &state, 1, weight);
  ASSERT_TRUE(updated.ok()) << updated.status();
  // After bias correction m_hat = g and v_hat = g^2, so the step is lr * sign(g).
  EXPECT_NEAR((*updated)[0].values[0], 0.99, kTranscendental);
  EXPECT_NEAR((*updated)[0].values[1], 1.01, kTranscendental);
  EXPECT_NEAR(state[0], 0.1 * 0.3, kTranscendental);   // m
  EXPECT_NEAR(state[3], 0.001 * 16, kTranscendental);  // v
}

TEST_F(ReferenceKernelsTest, RejectsUnknownMissingAndMistypedAttributes) {
  ReferenceTensor x = FloatTensor(Shape({2}), {1, 2});
  Status unknown = RunStatus("relu", {FloatAttribute("alpha", 1)}, {x}, {Shape({2})});
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("unknown attribute 'alpha'"), std::string::npos);
  Status missing = RunStatus("scale", {}, {x}, {Shape({2})});
  EXPECT_NE(missing.message().find("factor"), std::string::npos);
  Status mistyped = RunStatus("softmax", {FloatAttribute("causal", 1)}, {x}, {Shape({2})});
  EXPECT_NE(mistyped.message().find("must be a bool"), std::string::npos);
}

TEST_F(ReferenceKernelsTest, ReportsOutOfRangeLabelsAndIdsNamingTensorIndexAndValue) {
  ReferenceTensor logits = FloatTensor(Shape({2, 3}), {0, 0, 0, 0, 0, 0});
  Status label =
      RunStatus("softmax_cross_entropy", {}, {logits, IntTensor(Shape({2}), {0, 3})}, {Shape({2})});
  EXPECT_EQ(label.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(label.message().find("labels[1] = 3"), std::string::npos) << label;
  Status accuracy = RunStatus("accuracy", {}, {logits, IntTensor(Shape({2}), {-1, 0})}, {Shape()});
  EXPECT_NE(accuracy.message().find("labels[0] = -1"), std::string::npos) << accuracy;
  ReferenceTensor table = FloatTensor(Shape({2, 1}), {0, 1});
  Status id =
      RunStatus("embedding", {}, {table, IntTensor(Shape({3}), {0, 1, 2})}, {Shape({3, 1})});
  EXPECT_NE(id.message().find("ids[2] = 2"), std::string::npos) << id;
}

TEST_F(ReferenceKernelsTest, ReportsAnUnknownOpTypeAsNotFound) {
  EXPECT_EQ(RunStatus("warp_drive", {}, {}, {}).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace reference
}  // namespace softwire
