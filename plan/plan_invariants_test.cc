// The plan invariants accept a valid two-node plan and name what is at fault in a broken one.
// actors/actor_description_test.cc checks every invariant's message through DescribeActors.
#include "plan/plan_invariants.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/testing/two_node_plan.h"

namespace softwire {
namespace plan {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(const proto::Plan& plan) {
  Status status = CheckPlanInvariants(plan);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
  return status.message();
}

TEST(PlanInvariantsTest, AcceptsAValidPlan) {
  const proto::Plan plan = testing::TwoNodePlan();
  EXPECT_TRUE(CheckPlanInvariants(plan).ok()) << CheckPlanInvariants(plan);
}

TEST(PlanInvariantsTest, RefusesASchedulePastTheLimitsBeforeCountingFirings) {
  proto::Plan plan = testing::TwoNodePlan();
  plan.mutable_schedule()->set_steps(int64_t{1} << 62);  // steps * pieces overflowed int64.
  EXPECT_THAT(ErrorOf(plan), HasSubstr("schedule: steps (4611686018427387904) and pieces_per_step "
                                       "(1) must be at most 1099511627776 and 4096"));
  plan = testing::TwoNodePlan();
  plan.mutable_schedule()->set_pieces_per_step(1 << 22);  // Lifetimes took gigabytes.
  EXPECT_THAT(ErrorOf(plan), HasSubstr("must be at most"));
}

TEST(PlanInvariantsTest, RefusesTwoDevicesWithOneNodeAndName) {
  proto::Plan plan = testing::TwoNodePlan();
  plan.mutable_device(1)->set_node(plan.device(0).node());
  plan.mutable_device(1)->set_name(plan.device(0).name());
  EXPECT_THAT(ErrorOf(plan), HasSubstr("another device of the plan has the same node and name"));
}

TEST(PlanInvariantsTest, NamesAReaderMissingFromTheConsumerList) {
  proto::Plan plan = testing::TwoNodePlan();
  plan.mutable_actor(4)->add_input_register(2);  // sink reads y, which does not list it.
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'y' (2): is read by actor 'sink' (4), which its "
                                       "consumer list lacks"));
}

TEST(PlanInvariantsTest, ARepeatedInputIsOneConsumer) {
  proto::Plan plan = testing::TwoNodePlan();
  plan.mutable_actor(3)->add_input_register(2);  // relu(y, y).
  EXPECT_TRUE(CheckPlanInvariants(plan).ok()) << CheckPlanInvariants(plan);
  plan.mutable_register_def(2)->add_consumer()->set_actor(3);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'y' (2): lists consumer actor 'relu' (3) twice"));
}

TEST(PlanInvariantsTest, NamesTheDeviceWhoseArenaOverlaps) {
  proto::Plan plan = testing::TwoNodePlan();
  plan.mutable_register_def(3)->set_offset(4);  // z over y's second slot.
  EXPECT_THAT(ErrorOf(plan), HasSubstr("device 1 (node1/cpu:0): register 'y' (2) slots [0, 8) "
                                       "overlaps register 'z' (3) slots [4, 12)"));
}

TEST(PlanInvariantsTest, NamesTheActorWorkspaceOrStateAtFault) {
  proto::Plan plan = testing::TwoNodePlan();
  plan.mutable_actor(3)->set_workspace_bytes(4);  // relu's workspace over y's first slot.
  EXPECT_THAT(ErrorOf(plan), HasSubstr("device 1 (node1/cpu:0): register 'y' (2) slots [0, 8) "
                                       "overlaps actor 'relu' (3) workspace [0, 4)"));
  plan = testing::TwoNodePlan();
  const int64_t end = plan.device(1).planned_bytes();
  plan.mutable_actor(3)->set_state_offset(end);
  plan.mutable_actor(3)->set_state_bytes(4);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'relu' (3) state [" + std::to_string(end) + ", " +
                                       std::to_string(end + 4) + ") ends beyond planned_bytes " +
                                       std::to_string(end)));
  plan = testing::TwoNodePlan();
  plan.mutable_actor(3)->set_state_offset(-4);
  plan.mutable_actor(3)->set_state_bytes(4);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'relu' (3) state: negative offset or size"));
}

// Many actors: the name check is a hash table, which must still find the one repeat among
// 200,000 names (and accept them all when they differ), and name its first repeat.
TEST(PlanInvariantsTest, FindsTheOneRepeatedNameAmongManyActors) {
  proto::Plan plan = testing::TwoNodePlan();
  constexpr int kExtra = 200000;
  for (int i = 0; i < kExtra; ++i) {
    proto::ActorDef* actor = plan.add_actor();
    actor->set_id(plan.actor_size() - 1);
    actor->set_name("extra" + std::to_string(i));
    actor->set_device(i % 2);
  }
  EXPECT_TRUE(CheckIds(plan).ok()) << CheckIds(plan);
  plan.mutable_actor(plan.actor_size() - 2)->set_name("extra12345");
  plan.mutable_actor(plan.actor_size() - 1)->set_name("relu");
  Status status = CheckIds(plan);
  EXPECT_THAT(status.message(),
              HasSubstr("actor 'extra12345' (" + std::to_string(plan.actor_size() - 2) +
                        "): name is not unique"));
}

TEST(PlanInvariantsTest, NamesAnActorWritingARegisterWithAShorterPeriod) {
  proto::Plan plan = testing::TwoNodePlan();
  plan.mutable_actor(1)->set_period(2);
  plan.mutable_actor(1)->set_firings(1);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'send' (1): reads register 'x' (0) with period 1, "
                                       "which its period 2 does not divide"));
}

}  // namespace
}  // namespace plan
}  // namespace softwire
