// A plan runs for more or fewer steps with its firing counts rescaled, and refuses a number of
// steps its periods do not divide.
#include "plan/steps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/plan_invariants.h"
#include "plan/testing/two_node_plan.h"

namespace softwire {
namespace plan {
namespace {

using ::testing::HasSubstr;

TEST(StepsTest, WithStepsRescalesTheScheduleAndEveryActorsFirings) {
  const proto::Plan plan = testing::TwoNodePlan();
  EXPECT_EQ(TotalPieces(plan), 2);
  StatusOr<proto::Plan> longer = WithSteps(plan, 5);
  ASSERT_TRUE(longer.ok()) << longer.status();
  EXPECT_EQ(longer->schedule().steps(), 5);
  for (const proto::ActorDef& actor : longer->actor()) EXPECT_EQ(actor.firings(), 5);
  EXPECT_TRUE(CheckPlanInvariants(*longer).ok()) << CheckPlanInvariants(*longer);
}

TEST(StepsTest, LimitStepsAllowsOnlyFewerStepsThanPlanned) {
  const proto::Plan plan = testing::TwoNodePlan();
  StatusOr<proto::Plan> shorter = LimitSteps(plan, 1);
  ASSERT_TRUE(shorter.ok()) << shorter.status();
  EXPECT_EQ(shorter->actor(0).firings(), 1);
  EXPECT_EQ(LimitSteps(plan, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LimitSteps(plan, 0).status().code(), StatusCode::kInvalidArgument);
}

TEST(StepsTest, RefusesMoreStepsThanTheLimit) {
  StatusOr<proto::Plan> plan = WithSteps(testing::TwoNodePlan(), kMaxSteps + 1);
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("1 to 1099511627776"));
}

TEST(StepsTest, RefusesStepsThatAPeriodDoesNotDivideNamingTheActor) {
  proto::Plan plan = testing::TwoNodePlan();
  plan.mutable_schedule()->set_pieces_per_step(1);
  plan.mutable_actor(3)->set_period(2);
  StatusOr<proto::Plan> odd = WithSteps(plan, 3);
  ASSERT_FALSE(odd.ok());
  EXPECT_THAT(odd.status().message(),
              HasSubstr("actor 'relu': period 2 does not divide the 3 pieces of 3 steps"));
}

}  // namespace
}  // namespace plan
}  // namespace softwire
