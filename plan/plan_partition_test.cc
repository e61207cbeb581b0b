// A node's part of a plan holds its devices, actors and registers, and the edges that cross to
// the other node in both directions.
#include "plan/plan_partition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/testing/two_node_plan.h"

namespace softwire {
namespace plan {
namespace {

using ::testing::ElementsAre;

TEST(PlanPartitionTest, ListsTheNodesInTheOrderOfTheirDevices) {
  EXPECT_THAT(PlanNodes(testing::TwoNodePlan()), ElementsAre("node0", "node1"));
}

TEST(PlanPartitionTest, NodeZeroHostsItsActorsAndRegistersAndOneEdgeEachWay) {
  StatusOr<PlanPartition> part = PartitionPlan(testing::TwoNodePlan(), "node0");
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_EQ(part->node, "node0");
  EXPECT_THAT(part->devices, ElementsAre(0));
  EXPECT_THAT(part->actors, ElementsAre(0, 1, 4));
  EXPECT_THAT(part->registers, ElementsAre(0, 1));
  ASSERT_EQ(part->outgoing.size(), 1u);
  EXPECT_EQ(part->outgoing[0].register_id, 1);  // wire: send -> recv.
  EXPECT_EQ(part->outgoing[0].producer, 1);
  EXPECT_EQ(part->outgoing[0].consumer, 2);
  EXPECT_EQ(part->outgoing[0].peer_node, "node1");
  ASSERT_EQ(part->incoming.size(), 1u);
  EXPECT_EQ(part->incoming[0].register_id, 3);  // z: relu -> sink.
  EXPECT_EQ(part->incoming[0].producer, 3);
  EXPECT_EQ(part->incoming[0].consumer, 4);
  EXPECT_EQ(part->incoming[0].peer_node, "node1");
}

TEST(PlanPartitionTest, NodeOneSeesTheSameEdgesFromTheOtherSide) {
  StatusOr<PlanPartition> part = PartitionPlan(testing::TwoNodePlan(), "node1");
  ASSERT_TRUE(part.ok()) << part.status();
  EXPECT_THAT(part->devices, ElementsAre(1));
  EXPECT_THAT(part->actors, ElementsAre(2, 3));
  EXPECT_THAT(part->registers, ElementsAre(2, 3));
  ASSERT_EQ(part->outgoing.size(), 1u);
  EXPECT_EQ(part->outgoing[0].register_id, 3);
  EXPECT_EQ(part->outgoing[0].peer_node, "node0");
  ASSERT_EQ(part->incoming.size(), 1u);
  EXPECT_EQ(part->incoming[0].register_id, 1);
  EXPECT_EQ(part->incoming[0].peer_node, "node0");
}

TEST(PlanPartitionTest, EveryActorAndRegisterBelongsToExactlyOneNode) {
  const proto::Plan plan = testing::TwoNodePlan();
  std::vector<int> actors(static_cast<size_t>(plan.actor_size()), 0);
  std::vector<int> registers(static_cast<size_t>(plan.register_def_size()), 0);
  for (const std::string& node : PlanNodes(plan)) {
    StatusOr<PlanPartition> part = PartitionPlan(plan, node);
    ASSERT_TRUE(part.ok()) << part.status();
    for (int64_t id : part->actors) ++actors[static_cast<size_t>(id)];
    for (int64_t id : part->registers) ++registers[static_cast<size_t>(id)];
  }
  EXPECT_THAT(actors, ::testing::Each(1));
  EXPECT_THAT(registers, ::testing::Each(1));
}

TEST(PlanPartitionTest, ANodeWithoutDevicesIsNotFound) {
  EXPECT_EQ(PartitionPlan(testing::TwoNodePlan(), "node7").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace plan
}  // namespace softwire
