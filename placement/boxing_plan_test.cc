// Which boxing PlanBoxing picks, and what it costs.
#include "placement/boxing_plan.h"

#include <gtest/gtest.h>

#include "placement/cluster_spec.h"

namespace softwire {
namespace placement {
namespace {

class BoxingPlanTest : public ::testing::Test {
 protected:
  BoxingPlanTest()
      : model_(*ClusterModel::Build(*ParseClusterShorthand("8sim", 8))), cost_(model_) {}

  BoxingPlan Plan(const DeviceMesh& from_mesh, NdSbp from, const DeviceMesh& to_mesh, NdSbp to,
                  const std::vector<int64_t>& dims) {
    BoxingRequest request{&from_mesh, from, &to_mesh, to, &dims, 4};
    return PlanBoxing(cost_, request);
  }

  ClusterModel model_;
  CostModel cost_;
};

NdSbp Nd(Sbp dp, Sbp tp) {
  return {dp, tp};
}

const Sbp B = Sbp::Broadcast();
const Sbp P = Sbp::Partial();
Sbp S(int axis) {
  return Sbp::Split(axis);
}

TEST_F(BoxingPlanTest, NeedsNothingWhenLayoutsAgreeAfterNormalizing) {
  DeviceMesh dp4{{0, 1, 2, 3}, {4, 1}};
  EXPECT_FALSE(Plan(dp4, Nd(S(0), P), dp4, Nd(S(0), B), {8, 8}).needed);
}

TEST_F(BoxingPlanTest, AllReducesPartialsIntoBroadcastOverTheDataParallelAxis) {
  DeviceMesh dp4{{0, 1, 2, 3}, {4, 1}};
  BoxingPlan plan = Plan(dp4, Nd(P, B), dp4, Nd(B, B), {256, 256});
  ASSERT_TRUE(plan.needed);
  ASSERT_FALSE(plan.general);
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].method, BoxingMethod::kAllReduce);
  EXPECT_EQ(plan.Describe(), "all_reduce over dp");
  // 6 ring steps of 64 KiB, plus the local adds, splits and concatenation.
  const double ring = 6 * (2e-6 + 65536.0 / 50e9);
  EXPECT_GT(plan.seconds, ring);
  EXPECT_LT(plan.seconds, ring * 1.1);
}

TEST_F(BoxingPlanTest, PicksEachOneAxisCollectiveFromThePairOfSbps) {
  DeviceMesh tp2{{0, 1}, {1, 2}};
  EXPECT_EQ(Plan(tp2, Nd(B, B), tp2, Nd(B, S(1)), {4, 8}).steps[0].method,
            BoxingMethod::kLocalSlice);
  EXPECT_EQ(Plan(tp2, Nd(B, S(0)), tp2, Nd(B, B), {4, 8}).steps[0].method,
            BoxingMethod::kAllGather);
  EXPECT_EQ(Plan(tp2, Nd(B, P), tp2, Nd(B, S(1)), {4, 8}).steps[0].method,
            BoxingMethod::kReduceScatter);
  EXPECT_EQ(Plan(tp2, Nd(B, S(0)), tp2, Nd(B, S(1)), {4, 8}).steps[0].method,
            BoxingMethod::kAllToAll);
  EXPECT_EQ(Plan(tp2, Nd(B, B), tp2, Nd(B, P), {4, 8}).steps[0].method, BoxingMethod::kZeroFill);
  EXPECT_EQ(Plan(tp2, Nd(B, S(0)), tp2, Nd(B, P), {4, 8}).steps[0].method,
            BoxingMethod::kPadToPartial);
}

TEST_F(BoxingPlanTest, ChangesBothAxesInTwoStepsOnA2x2Mesh) {
  DeviceMesh grid{{0, 1, 2, 3}, {2, 2}};
  BoxingPlan plan = Plan(grid, Nd(P, S(1)), grid, Nd(B, B), {64, 64});
  ASSERT_FALSE(plan.general);
  ASSERT_EQ(plan.steps.size(), 2u);
  EXPECT_EQ(plan.Describe().find("all_reduce over dp") != std::string::npos, true);
  EXPECT_EQ(plan.Describe().find("all_gather over tp") != std::string::npos, true);
}

TEST_F(BoxingPlanTest, TakesTheGeneralPathForInterleavedSplitsOfOneAxis) {
  // Gathering the dp axis of (S(0), S(0)) would need rows 0-1 and 4-5 on one group.
  DeviceMesh grid{{0, 1, 2, 3}, {2, 2}};
  BoxingPlan plan = Plan(grid, Nd(S(0), S(0)), grid, Nd(B, S(0)), {8, 4});
  ASSERT_TRUE(plan.general);
  ASSERT_EQ(plan.parts.size(), 4u);
  // Device (0, 1) wants rows 4-7: parts 2 (device (1, 0)) and 3 (device (1, 1)).
  const DestinationPart& part = plan.parts[1];
  EXPECT_EQ(part.region.begin[0], 4);
  ASSERT_EQ(part.blocks.size(), 2u);
  EXPECT_EQ(part.blocks[0].source, 2);
  EXPECT_EQ(part.blocks[1].source, 3);
}

TEST_F(BoxingPlanTest, CopiesStageToStageFromTheMatchingCoordinate) {
  DeviceMesh stage0{{0, 1}, {2, 1}};
  DeviceMesh stage1{{2, 3}, {2, 1}};
  BoxingPlan plan = Plan(stage0, Nd(S(0), B), stage1, Nd(S(0), B), {8, 16});
  ASSERT_TRUE(plan.general);
  for (int j = 0; j < 2; ++j) {
    ASSERT_EQ(plan.parts[j].blocks.size(), 1u);
    EXPECT_EQ(plan.parts[j].blocks[0].source, j);
    EXPECT_EQ(plan.parts[j].blocks[0].box, plan.parts[j].region);
  }
  EXPECT_DOUBLE_EQ(plan.seconds, 2e-6 + 4 * 16 * 4 / 50e9);
}

TEST_F(BoxingPlanTest, SumsPartialTermsOntoASingleDeviceForASink) {
  DeviceMesh dp4{{0, 1, 2, 3}, {4, 1}};
  DeviceMesh sink{{0}, {1, 1}};
  BoxingPlan plan = Plan(dp4, Nd(P, B), sink, Nd(B, B), {});
  ASSERT_TRUE(plan.general);
  ASSERT_EQ(plan.parts.size(), 1u);
  EXPECT_EQ(plan.parts[0].blocks.size(), 4u);
  // Three 4-byte copies into one copy queue, then the assemble.
  EXPECT_GT(plan.seconds, 3 * 2e-6);
}

TEST_F(BoxingPlanTest, GathersScalarsInsteadOfRingReducingThem) {
  DeviceMesh dp4{{0, 1, 2, 3}, {4, 1}};
  BoxingPlan plan = Plan(dp4, Nd(P, B), dp4, Nd(B, B), {2});
  EXPECT_TRUE(plan.general);
  EXPECT_EQ(plan.parts[2].blocks.size(), 4u);
}

TEST_F(BoxingPlanTest, GivesZerosToEveryPartialTermButTheFirstOnAnotherMesh) {
  DeviceMesh one{{0}, {1, 1}};
  DeviceMesh tp2{{2, 3}, {1, 2}};
  BoxingPlan plan = Plan(one, Nd(B, B), tp2, Nd(B, P), {4});
  ASSERT_TRUE(plan.general);
  EXPECT_FALSE(plan.parts[0].zero);
  EXPECT_TRUE(plan.parts[1].zero);
}

}  // namespace
}  // namespace placement
}  // namespace softwire
