// A compiled plan on two nodes splits into two parts that together hold every actor and
// register once, and that meet only through the edges PartitionPlan names, in both directions
// (activations forward, gradients back), each seen from both of its ends.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "plan/plan_partition.h"

namespace softwire {
namespace {

proto::Plan CompileTransformerOnTwoNodes() {
  StatusOr<compiler::JobFile> file =
      compiler::ParseJobFile("tests/compiler/jobs/transformer.pbtxt");
  EXPECT_TRUE(file.ok()) << file.status();
  compiler::CompileOptions options;
  options.cluster = *placement::ParseClusterShorthand("2x2cpu", 4);
  options.parallel.set_data_parallel(2);
  options.parallel.set_pipeline_stages(2);
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : proto::Plan();
}

const std::string& NodeOf(const proto::Plan& plan, int64_t actor) {
  return plan.device(plan.actor(static_cast<int>(actor)).device()).node();
}

TEST(PartitionPlanTest, TwoNodesMeetOnlyThroughTheEdgesTheirPartsName) {
  const proto::Plan plan = CompileTransformerOnTwoNodes();
  ASSERT_THAT(plan::PlanNodes(plan), ::testing::ElementsAre("node0", "node1"));
  std::vector<int> actors(static_cast<size_t>(plan.actor_size()), 0);
  std::vector<int> registers(static_cast<size_t>(plan.register_def_size()), 0);
  size_t edges_out = 0;
  size_t edges_in = 0;
  for (const std::string& node : plan::PlanNodes(plan)) {
    StatusOr<plan::PlanPartition> part = plan::PartitionPlan(plan, node);
    ASSERT_TRUE(part.ok()) << part.status();
    EXPECT_EQ(part->devices.size(), 2u) << node;
    for (int64_t id : part->actors) ++actors[static_cast<size_t>(id)];
    for (int64_t id : part->registers) ++registers[static_cast<size_t>(id)];
    EXPECT_FALSE(part->outgoing.empty()) << node;
    EXPECT_FALSE(part->incoming.empty()) << node;
    for (const plan::PlanEdge& edge : part->outgoing) {
      EXPECT_EQ(NodeOf(plan, edge.producer), node);
      EXPECT_EQ(NodeOf(plan, edge.consumer), edge.peer_node);
      EXPECT_NE(edge.peer_node, node);
    }
    for (const plan::PlanEdge& edge : part->incoming) {
      EXPECT_EQ(NodeOf(plan, edge.consumer), node);
      EXPECT_EQ(NodeOf(plan, edge.producer), edge.peer_node);
    }
    edges_out += part->outgoing.size();
    edges_in += part->incoming.size();
  }
  EXPECT_THAT(actors, ::testing::Each(1));
  EXPECT_THAT(registers, ::testing::Each(1));
  EXPECT_EQ(edges_out, edges_in);  // Each edge leaves one node and enters the other.
}

}  // namespace
}  // namespace softwire
