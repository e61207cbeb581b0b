// DescribeActors builds descriptions from valid plans and rejects every broken invariant of
// docs/PROTOCOL.md and a broken kind rule (each rule: plan/actor_kind_rules_test.cc) with an
// error naming the actor or register.
#include "actors/actor_description.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace {

using plan::testing::PlanBuilder;
using ::testing::HasSubstr;

// source -> x -> forward(x, w) -> dw -> acc -> g -> update(g, w), with weight -> w.
proto::Plan TrainingLoop() {
  PlanBuilder builder(2, 2);
  builder.AddRegister("x", 2).AddRegister("w", 1).AddRegister("dw", 1).AddRegister("g", 1);
  builder.AddRegister("loss", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  builder.AddActor({"forward", proto::ACTOR_KIND_COMPUTE, {"x", "w"}, {"dw", "loss"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"dw"}, {"g"}});
  builder.AddActor({"update", proto::ACTOR_KIND_UPDATE, {"g", "w"}, {}, 0, {"w"}});
  builder.AddActor({"report", proto::ACTOR_KIND_SINK, {"loss"}, {}});
  return builder.Build();
}

constexpr int kX = 0, kW = 1, kDw = 2, kG = 3;
constexpr int kSource = 0, kWeight = 1, kForward = 2, kAcc = 3, kUpdate = 4, kReport = 5;

std::string ErrorOf(const proto::Plan& plan) {
  StatusOr<std::vector<ActorDescription>> actors = DescribeActors(plan);
  EXPECT_FALSE(actors.ok());
  if (actors.ok()) return "";
  EXPECT_EQ(actors.status().code(), StatusCode::kInvalidArgument);
  return actors.status().message();
}

TEST(DescribeActorsTest, DescribesEveryActorOfAValidPlan) {
  StatusOr<std::vector<ActorDescription>> actors = DescribeActors(TrainingLoop());
  ASSERT_TRUE(actors.ok()) << actors.status();
  ASSERT_EQ(actors->size(), 6u);
  const ActorDescription& update = (*actors)[kUpdate];
  EXPECT_EQ(update.name, "update");
  EXPECT_EQ(update.kind, ActorKind::kUpdate);
  EXPECT_EQ(update.period, 2);
  EXPECT_EQ(update.firings, 2);
  ASSERT_EQ(update.inputs.size(), 2u);
  EXPECT_EQ(update.inputs[1].register_name, "w");
  EXPECT_EQ(update.inputs[1].producer, kWeight);
  EXPECT_EQ(update.inputs[1].phase, 1);
  EXPECT_EQ(update.inputs[1].period, 2);
  const ActorDescription& weight = (*actors)[kWeight];
  ASSERT_EQ(weight.outputs.size(), 1u);
  EXPECT_EQ(weight.outputs[0].slots, 1);
  ASSERT_EQ(weight.outputs[0].consumers.size(), 2u);
  EXPECT_EQ(weight.outputs[0].consumers[0].actor, kForward);
  EXPECT_EQ(weight.outputs[0].consumers[0].phase, 0);
  EXPECT_EQ(weight.outputs[0].consumers[1].actor, kUpdate);
  EXPECT_EQ(weight.outputs[0].consumers[1].phase, 1);
  EXPECT_EQ((*actors)[kSource].firings, 4);
  EXPECT_EQ((*actors)[kForward].inputs[0].slots, 2);
  EXPECT_STREQ(ActorKindName((*actors)[kAcc].kind), "accumulate");
}

TEST(DescribeActorsTest, RejectsAnActorPeriodThatDoesNotDivideTheTotalPieces) {
  proto::Plan plan = TrainingLoop();  // 4 pieces.
  plan.mutable_actor(kForward)->set_period(3);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'forward' (2): period 3 must be >= 1 and divide "
                                       "total_pieces 4"));
}

TEST(DescribeActorsTest, RejectsARegisterPeriodThatDoesNotDivideTheTotalPieces) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kG)->set_period(3);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'g' (3): period 3"));
}

TEST(DescribeActorsTest, RejectsAnActorReadingARegisterWhosePeriodItsPeriodDoesNotDivide) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kForward)->set_period(2);
  plan.mutable_actor(kForward)->set_firings(2);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'forward' (2): reads register 'x' (0) with period "
                                       "1, which its period 2 does not divide"));
}

TEST(DescribeActorsTest, RejectsFiringsThatDisagreeWithThePeriod) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kAcc)->set_firings(2);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'acc' (3): firings is 2, must be total_pieces / "
                                       "period = 4"));
}

TEST(DescribeActorsTest, RejectsAConsumerListNamingAnActorThatDoesNotReadTheRegister) {
  proto::Plan plan = TrainingLoop();
  proto::RegisterConsumer* stranger = plan.mutable_register_def(kX)->add_consumer();
  stranger->set_actor(kReport);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'x' (0): lists consumer actor 'report' (5), "
                                       "which does not read it"));
}

TEST(DescribeActorsTest, RejectsAReaderMissingFromTheConsumerList) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kDw)->clear_consumer();
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'dw' (2): is read by actor 'acc' (3), which "
                                       "its consumer list lacks"));
}

TEST(DescribeActorsTest, RejectsARegisterWithTwoProducers) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kSource)->add_output_register(kDw);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'dw' (2): must have exactly one producer, has "
                                       "2"));
}

TEST(DescribeActorsTest, RejectsAProducerFieldNamingTheWrongActor) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kDw)->set_producer(kSource);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'dw' (2): names actor 0 as producer, but "
                                       "actor 'forward' (2) writes it"));
}

TEST(DescribeActorsTest, RejectsTwoPhaseOneConsumers) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kW)->mutable_consumer(0)->set_phase(1);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'w' (1): has 2 phase-1 consumers; at most one "
                                       "is allowed"));
}

TEST(DescribeActorsTest, RejectsAPhaseOneConsumerOfARegisterWithTwoSlots) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kW)->set_slots(2);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'w' (1): has a phase-1 consumer and 2 slots; an "
                                       "in-place writer needs exactly one slot"));
}

TEST(DescribeActorsTest, RejectsAPhaseOtherThanZeroOrOne) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kX)->mutable_consumer(0)->set_phase(2);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("phases are 0 or 1"));
}

TEST(DescribeActorsTest, RejectsIdsThatAreNotTheirIndexAndIdsThatDoNotExist) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kG)->set_id(7);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'g' (7): id must equal its index 3"));
  plan = TrainingLoop();
  plan.mutable_actor(kAcc)->set_input_register(0, 42);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'acc' (3): input register 42 does not exist"));
  plan = TrainingLoop();
  plan.mutable_output(0)->set_sink_actor(9);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("output 'loss': sink actor 9 does not exist"));
}

TEST(DescribeActorsTest, RejectsDuplicateActorNamesAndUnspecifiedKinds) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kAcc)->set_name("forward");
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'forward' (3): name is not unique"));
  plan = TrainingLoop();
  plan.mutable_actor(kAcc)->set_kind(proto::ACTOR_KIND_UNSPECIFIED);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'acc' (3): has no kind"));
}

TEST(DescribeActorsTest, RejectsAnEmptySchedule) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_schedule()->set_steps(0);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("schedule: steps (0) and pieces_per_step (2) must be >= "
                                       "1"));
}

TEST(DescribeActorsTest, RejectsZeroSlotsAndSlotsSmallerThanTheTensor) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kX)->set_slots(0);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'x' (0): slots is 0, must be >= 1"));
  plan = TrainingLoop();
  plan.mutable_register_def(kX)->mutable_tensor()->add_dims(8);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("register 'x' (0): bytes_per_slot 4 is less than the 32 "
                                       "bytes of its tensor"));
}

TEST(DescribeActorsTest, RejectsOverlappingSlotsAndAnArenaLargerThanPlanned) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kG)->set_offset(plan.register_def(kDw).offset());
  EXPECT_THAT(ErrorOf(plan), HasSubstr("device 0 (node0/cpu:0): register 'dw' (2) slots [12, 16) "
                                       "overlaps register 'g' (3) slots [12, 16)"));
  plan = TrainingLoop();
  plan.mutable_actor(kUpdate)->set_state_bytes(8);
  plan.mutable_actor(kUpdate)->set_state_offset(plan.device(0).planned_bytes());
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'update' (4) state [24, 32) ends beyond "
                                       "planned_bytes 24"));
  plan.mutable_device(0)->set_planned_bytes(32);
  EXPECT_TRUE(DescribeActors(plan).ok());
}

// Each rule is tested in plan/actor_kind_rules_test.cc; here, that DescribeActors runs them.
TEST(DescribeActorsTest, RejectsActorsBreakingTheirKindsRulesAndOutputsWithoutASink) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kW)->mutable_consumer(1)->set_phase(0);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'update' (4): update actor writes its variable in "
                                       "place, so it must be the phase-1 consumer of register "
                                       "'w' (1)"));
  plan = TrainingLoop();
  plan.mutable_output(0)->set_sink_actor(kForward);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("output 'loss': actor 'forward' (2) is not a sink "
                                       "reporting it"));
}

TEST(DescribeActorsTest, RejectsAnActorReadingWhatItWrites) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kForward)->add_input_register(kDw);
  plan.mutable_register_def(kDw)->add_consumer()->set_actor(kForward);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("actor 'forward' (2): reads register 'dw' (2), which it "
                                       "writes itself"));
}

}  // namespace
}  // namespace actors
}  // namespace softwire
