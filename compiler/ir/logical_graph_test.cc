#include "compiler/ir/logical_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace softwire {
namespace compiler {
namespace {

using ::testing::ElementsAre;

// a -> [op1] -> b -> [op2] -> c, with op3 also reading a.
class SmallGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = *graph_.AddTensor("a");
    b_ = *graph_.AddTensor("b");
    c_ = *graph_.AddTensor("c");
    d_ = *graph_.AddTensor("d");
    source_ = *graph_.AddOp({"source", "source", {}, {a_}, {}, 1, "", std::nullopt, ""});
    op2_ = *graph_.AddOp({"op2", "relu", {b_}, {c_}, {}, 3, "", std::nullopt, ""});
    op1_ = *graph_.AddOp({"op1", "relu", {a_}, {b_}, {}, 2, "", std::nullopt, ""});
    op3_ = *graph_.AddOp({"op3", "relu", {a_}, {d_}, {}, 4, "", std::nullopt, ""});
  }

  LogicalGraph graph_;
  TensorId a_, b_, c_, d_;
  OpId source_, op1_, op2_, op3_;
};

TEST_F(SmallGraph, OrdersProducersBeforeConsumersSmallestIdFirst) {
  StatusOr<std::vector<OpId>> order = graph_.TopologicalOrder();
  ASSERT_TRUE(order.ok());
  EXPECT_THAT(*order, ElementsAre(source_, op1_, op2_, op3_));
}

TEST_F(SmallGraph, LinksProducersAndConsumersBothWays) {
  EXPECT_EQ(graph_.tensor(b_).producer, op1_);
  ASSERT_EQ(graph_.tensor(a_).consumers.size(), 2u);
  EXPECT_EQ(graph_.tensor(a_).consumers[1].op, op3_);
  EXPECT_TRUE(graph_.Verify().ok());
}

TEST_F(SmallGraph, RejectsATakenTensorOrOpName) {
  EXPECT_EQ(graph_.AddTensor("a").status().message(), "tensor 'a' is defined twice");
  TensorId e = *graph_.AddTensor("e");
  EXPECT_EQ(
      graph_.AddOp({"op1", "relu", {a_}, {e}, {}, 0, "", std::nullopt, ""}).status().message(),
      "op name 'op1' is used twice");
}

TEST_F(SmallGraph, HandsOutUniqueNamesWithASuffix) {
  EXPECT_EQ(graph_.UniqueTensorName("a"), "a_2");
  EXPECT_EQ(graph_.UniqueTensorName("z"), "z");
  EXPECT_EQ(graph_.UniqueOpName("op1"), "op1_2");
}

TEST_F(SmallGraph, ReplacingAnInputMovesTheConsumerLink) {
  graph_.ReplaceInput(op3_, 0, b_);
  EXPECT_EQ(graph_.tensor(a_).consumers.size(), 1u);
  EXPECT_EQ(graph_.tensor(b_).consumers.size(), 2u);
  EXPECT_TRUE(graph_.Verify().ok());
}

TEST_F(SmallGraph, VerifyReportsABrokenLinkAsInternal) {
  graph_.mutable_tensor(c_).consumers.push_back({op1_, 0});
  Status status = graph_.Verify();
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("tensor 'c' lists a consumer"));
}

TEST(LogicalGraph, NamesTheOpsOfACycle) {
  LogicalGraph graph;
  TensorId x = *graph.AddTensor("x");
  TensorId y = *graph.AddTensor("y");
  TensorId z = *graph.AddTensor("z");
  ASSERT_TRUE(graph.AddOp({"first", "relu", {z}, {x}, {}, 0, "", std::nullopt, ""}).ok());
  ASSERT_TRUE(graph.AddOp({"second", "relu", {x}, {y}, {}, 0, "", std::nullopt, ""}).ok());
  ASSERT_TRUE(graph.AddOp({"third", "relu", {y}, {z}, {}, 0, "", std::nullopt, ""}).ok());
  OpId first_on_cycle = -1;
  StatusOr<std::vector<OpId>> order = graph.TopologicalOrder(&first_on_cycle);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().message(),
            "ops form a cycle: 'first' -> 'second' -> 'third' -> 'first'");
  EXPECT_EQ(first_on_cycle, 0);
}

TEST(LogicalGraph, KeepsReferencesValidWhileOpsAreAdded) {
  LogicalGraph graph;
  TensorId first = *graph.AddTensor("t0", TensorType{DType::kFloat32, Shape({3})});
  const Shape& shape = graph.tensor(first).type.shape;  // Held across the additions below.
  for (int i = 1; i < 1000; ++i) ASSERT_TRUE(graph.AddTensor("t" + std::to_string(i)).ok());
  EXPECT_EQ(shape, Shape({3}));
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
