// Ordering inputs: which inputs a kernel reads, the invariant (kinds, phases, devices, cycles)
// and lifetimes that the ordering edge shortens.
#include "plan/ordering_inputs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/plan_invariants.h"
#include "plan/register_lifetimes.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace plan {
namespace {

using ::testing::HasSubstr;
using testing::PlanBuilder;

int ActorNamed(const proto::Plan& plan, const std::string& name) {
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.name() == name) return static_cast<int>(actor.id());
  }
  ADD_FAILURE() << "no actor " << name;
  return 0;
}

int64_t RegisterNamed(const proto::Plan& plan, const std::string& name) {
  for (const proto::RegisterDef& reg : plan.register_def()) {
    if (reg.name() == name) return reg.id();
  }
  ADD_FAILURE() << "no register " << name;
  return 0;
}

// Each kernel describes the inputs it reads: every one, or all but its last `ordering` ones.
void DescribeKernelInputs(proto::Plan* plan, const std::string& actor, int ordering) {
  proto::ActorDef* def = plan->mutable_actor(ActorNamed(*plan, actor));
  def->mutable_kernel()->clear_input();
  for (int k = 0; k + ordering < def->input_register_size(); ++k) {
    *def->mutable_kernel()->add_input() =
        plan->register_def(static_cast<int>(def->input_register(k))).tensor();
  }
}

// As a backward pass with one weight: a variable v; make (reads v) -> x; grad_a (reads x) ->
// y; grad_b (reads x) -> w; next (reads y, and w as an ordering input when `ordered`) -> z;
// the update reads z and writes v in place, which orders the steps; a sink reads w. grad_b is
// the weight-gradient product, next the op after its sibling grad_a.
proto::Plan BackwardLikePlan(bool ordered) {
  PlanBuilder builder(/*steps=*/2, /*pieces_per_step=*/1);
  builder.AddRegister("v", 1, 0, {256});
  builder.AddRegister("x", 1, 0, {256});
  builder.AddRegister("y", 1, 0, {256});
  builder.AddRegister("w", 1);
  builder.AddRegister("z", 1, 0, {256});
  builder.AddActor({"variable", proto::ACTOR_KIND_VARIABLE, {}, {"v"}});
  builder.AddActor({"make", proto::ACTOR_KIND_COMPUTE, {"v"}, {"x"}});
  builder.AddActor({"grad_a", proto::ACTOR_KIND_COMPUTE, {"x"}, {"y"}});
  builder.AddActor({"grad_b", proto::ACTOR_KIND_COMPUTE, {"x"}, {"w"}});
  if (ordered) {
    builder.AddActor({"next", proto::ACTOR_KIND_COMPUTE, {"y", "w"}, {"z"}});
  } else {
    builder.AddActor({"next", proto::ACTOR_KIND_COMPUTE, {"y"}, {"z"}});
  }
  builder.AddActor({"update", proto::ACTOR_KIND_UPDATE, {"z", "v"}, {}, 0, {"v"}});
  builder.AddActor({"w.sink", proto::ACTOR_KIND_SINK, {"w"}, {}});
  proto::Plan plan = builder.Build();
  for (const char* actor : {"make", "grad_a", "grad_b", "next"}) {
    DescribeKernelInputs(&plan, actor, 0);
  }
  if (ordered) DescribeKernelInputs(&plan, "next", 1);
  return plan;
}

TEST(OrderingInputsTest, TheKernelReadsTheInputsItsKernelDefDescribes) {
  proto::Plan plan = BackwardLikePlan(/*ordered=*/true);
  const proto::ActorDef& next = plan.actor(ActorNamed(plan, "next"));
  EXPECT_EQ(KernelInputCount(next), 1);
  EXPECT_EQ(OrderingInputCount(next), 1);
  EXPECT_FALSE(IsOrderingInput(next, 0));
  EXPECT_TRUE(IsOrderingInput(next, 1));
  // No descriptor at all (hand-built plans): the kernel reads every input.
  proto::ActorDef bare = next;
  bare.mutable_kernel()->clear_input();
  EXPECT_EQ(KernelInputCount(bare), 2);
  EXPECT_EQ(OrderingInputCount(bare), 0);
  EXPECT_TRUE(CheckPlanInvariants(plan).ok()) << CheckPlanInvariants(plan);
}

TEST(OrderingInputsTest, TheEdgeEndsTheActivationsLifeBeforeTheNextOp) {
  // Without the edge grad_b may fire after next, so x may be live with z; with it, x's last
  // reader fires before next launches, and x and z may share bytes.
  for (bool ordered : {false, true}) {
    const proto::Plan plan = BackwardLikePlan(ordered);
    RegisterLifetimes lifetimes(plan);
    ASSERT_TRUE(lifetimes.analyzed()) << lifetimes.why();
    EXPECT_EQ(lifetimes.NeverLiveTogether(RegisterNamed(plan, "x"), RegisterNamed(plan, "z")),
              ordered);
  }
}

TEST(OrderingInputsTest, RefusesAnOrderingEdgeThatMakesACycle) {
  // grad_a waits for z, which next makes from grad_a's own output.
  proto::Plan plan = BackwardLikePlan(/*ordered=*/false);
  const int grad_a = ActorNamed(plan, "grad_a");
  const int64_t z = RegisterNamed(plan, "z");
  plan.mutable_actor(grad_a)->add_input_register(z);
  proto::RegisterConsumer* consumer =
      plan.mutable_register_def(static_cast<int>(z))->add_consumer();
  consumer->set_actor(grad_a);
  const Status status = CheckPlanInvariants(plan);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("actor 'grad_a' (2): ordering input register 'z' (4) makes a cycle"));
}

TEST(OrderingInputsTest, RefusesOrderingInputsOutsideComputeActorsOrPhaseZero) {
  proto::Plan plan = BackwardLikePlan(/*ordered=*/true);
  plan.mutable_actor(ActorNamed(plan, "next"))->set_kind(proto::ACTOR_KIND_BOXING);
  EXPECT_THAT(CheckOrderingInputs(plan).message(),
              HasSubstr("a boxing actor has 1 ordering inputs"));

  plan = BackwardLikePlan(/*ordered=*/true);
  proto::RegisterDef* w = plan.mutable_register_def(static_cast<int>(RegisterNamed(plan, "w")));
  for (proto::RegisterConsumer& consumer : *w->mutable_consumer()) {
    if (consumer.actor() == ActorNamed(plan, "next")) consumer.set_phase(1);
  }
  EXPECT_THAT(CheckOrderingInputs(plan).message(), HasSubstr("is read in phase 1"));
}

TEST(OrderingInputsTest, RefusesAKernelDescribingMoreInputsThanItsActorReads) {
  proto::Plan plan = BackwardLikePlan(/*ordered=*/false);
  proto::ActorDef* next = plan.mutable_actor(ActorNamed(plan, "next"));
  *next->mutable_kernel()->add_input() = next->kernel().input(0);
  EXPECT_THAT(CheckOrderingInputs(plan).message(),
              HasSubstr("actor 'next' (4): its kernel describes 2 inputs, but it reads 1"));
}

}  // namespace
}  // namespace plan
}  // namespace softwire
