// Range views: the offset a kernel input starts at, and the invariant that every range lies
// within its register.
#include "plan/input_ranges.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/plan_invariants.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace plan {
namespace {

using ::testing::HasSubstr;
using testing::PlanBuilder;

// A source fills x (64 float32: 256 bytes); "half" reads a 32-element range of it at byte
// `offset` and writes y (32 elements), which a sink reads.
proto::Plan HalfPlan(int64_t offset, int64_t read_elements = 32) {
  PlanBuilder builder(/*steps=*/1, /*pieces_per_step=*/1);
  builder.AddRegister("x", 1, 0, {64});
  builder.AddRegister("y", 1, 0, {32});
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"half", proto::ACTOR_KIND_COMPUTE, {"x"}, {"y"}});
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {"y"}, {}});
  proto::Plan plan = builder.Build();
  proto::ActorDef* half = plan.mutable_actor(1);
  EXPECT_EQ(half->name(), "half");
  proto::TensorDesc* read = half->mutable_kernel()->add_input();
  read->set_dtype(proto::DATA_TYPE_FLOAT32);
  read->add_dims(read_elements);
  half->mutable_kernel()->add_input_offset(offset);
  return plan;
}

TEST(InputRangesTest, AnInputStartsAtItsOffsetOrAtTheSlot) {
  const proto::Plan plan = HalfPlan(/*offset=*/128);
  EXPECT_EQ(InputOffset(plan.actor(1), 0), 128);
  EXPECT_TRUE(IsRangeInput(plan, plan.actor(1), 0));
  EXPECT_EQ(InputOffset(plan.actor(2), 0), 0);  // The sink gives no offsets.
  EXPECT_FALSE(IsRangeInput(plan, plan.actor(2), 0));
}

TEST(InputRangesTest, ARangeWithinTheRegisterPasses) {
  EXPECT_TRUE(CheckPlanInvariants(HalfPlan(0)).ok());
  EXPECT_TRUE(CheckPlanInvariants(HalfPlan(128)).ok());
  EXPECT_TRUE(CheckPlanInvariants(HalfPlan(4, 63)).ok());
}

TEST(InputRangesTest, ARangeThatLeavesTheSlotIsRejectedNamingTheActorAndInput) {
  const Status status = CheckPlanInvariants(HalfPlan(/*offset=*/132));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("actor 'half'"));
  EXPECT_THAT(status.message(), HasSubstr("input 0 reads 128 bytes from byte 132 of register 'x'"));
  EXPECT_THAT(status.message(), HasSubstr("which holds 256"));
  EXPECT_FALSE(CheckPlanInvariants(HalfPlan(-4)).ok());
  EXPECT_FALSE(CheckPlanInvariants(HalfPlan(0, 65)).ok());
}

TEST(InputRangesTest, ARangeThatStartsWithinAnElementIsRejected) {
  const Status status = CheckPlanInvariants(HalfPlan(/*offset=*/2));
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("within an element"));
}

TEST(InputRangesTest, OffsetsMustCoverEveryDescribedInput) {
  proto::Plan plan = HalfPlan(0);
  plan.mutable_actor(1)->mutable_kernel()->add_input_offset(0);
  const Status status = CheckPlanInvariants(plan);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("2 input offsets for 1 described inputs"));
}

}  // namespace
}  // namespace plan
}  // namespace softwire
