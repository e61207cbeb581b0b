// Every rule of every actor kind accepts the plans PlanBuilder makes and rejects the one thing a
// case breaks, with an error naming the actor and its kind. Each broken plan still keeps the
// plan invariants, so the error comes from the kind's rule and from nothing else.
#include "plan/actor_kind_rules.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "plan/plan_invariants.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace plan {
namespace {

using testing::ActorSpec;
using ::testing::HasSubstr;
using testing::PlanBuilder;

// source -> x -> forward(x, w) -> dw -> acc -> g -> update(g, w), with weight -> w, and
// forward -> loss -> report. 2 steps of 2 pieces.
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

constexpr int kW = 1, kDw = 2, kLoss = 4;
constexpr int kSource = 0, kWeight = 1, kForward = 2, kUpdate = 4, kReport = 5;

// source -> x -> copy -> y -> send -> wire -> recv -> z -> boxing -> b -> sink. 2 steps of 1.
proto::Plan MovingAValue() {
  PlanBuilder builder(2, 1);
  builder.AddRegister("x", 1).AddRegister("y", 1).AddRegister("wire", 1).AddRegister("z", 1);
  builder.AddRegister("b", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"copy", proto::ACTOR_KIND_COPY, {"x"}, {"y"}});
  builder.AddActor({"send", proto::ACTOR_KIND_SEND, {"y"}, {"wire"}});
  builder.AddActor({"recv", proto::ACTOR_KIND_RECV, {"wire"}, {"z"}});
  builder.AddActor({"boxing", proto::ACTOR_KIND_BOXING, {"z"}, {"b"}});
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {"b"}, {}});
  return builder.Build();
}

// The error of actor `name`'s kind rules; the plan must keep the plan invariants, or the case
// would not test the kind's rule.
std::string KindErrorOf(const proto::Plan& plan, const std::string& name) {
  const Status invariants = CheckPlanInvariants(plan);
  EXPECT_TRUE(invariants.ok()) << invariants;
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.name() != name) continue;
    const Status status = CheckActorKind(plan, actor);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
    return status.message();
  }
  ADD_FAILURE() << "no actor " << name;
  return "";
}

// The error of the whole plan's kind rules (outputs and variables too).
std::string ErrorOf(const proto::Plan& plan) {
  const Status status = CheckActorKindRules(plan);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status;
  return status.message();
}

TEST(ActorKindRulesTest, AcceptsEveryKindAsPlanBuilderMakesIt) {
  EXPECT_TRUE(CheckActorKindRules(TrainingLoop()).ok()) << CheckActorKindRules(TrainingLoop());
  EXPECT_TRUE(CheckActorKindRules(MovingAValue()).ok()) << CheckActorKindRules(MovingAValue());
}

TEST(ActorKindRulesTest, EveryActorHasAKind) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kForward)->set_kind(proto::ACTOR_KIND_UNSPECIFIED);
  EXPECT_EQ(KindErrorOf(plan, "forward"), "actor 'forward' (2): has no kind");
  plan.mutable_actor(kForward)->set_kind(static_cast<proto::ActorKind>(42));
  EXPECT_EQ(KindErrorOf(plan, "forward"), "actor 'forward' (2): kind 42 is not an actor kind");
}

TEST(ActorKindRulesTest, ASourceReadsNothingAndWritesOncePerPieceAsTheValue) {
  PlanBuilder builder(2, 2);
  builder.AddRegister("x", 1).AddRegister("y", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"second", proto::ACTOR_KIND_SOURCE, {"x"}, {"y"}});
  EXPECT_EQ(KindErrorOf(builder.Build(), "second"),
            "actor 'second' (1): source actor takes 0 inputs, has 1");

  builder = PlanBuilder(2, 2);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "source"),
              HasSubstr("source actor writes at least 1 outputs, has 0"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("x", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}, /*period=*/2});
  EXPECT_THAT(KindErrorOf(builder.Build(), "source"),
              HasSubstr("source actor has period 2, must be 1 (one piece per firing)"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("x", 1, /*period=*/2);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "source"),
              HasSubstr("source actor moves a value as it is, so register 'x' (0) must have its "
                        "period 1, has 2"));
}

TEST(ActorKindRulesTest, ASourceHasADatasetWithOneOutputPerRegisterAndASampleSlice) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kSource)->clear_source();
  EXPECT_THAT(KindErrorOf(plan, "source"), HasSubstr("source actor has no source settings"));

  plan = TrainingLoop();
  plan.mutable_actor(kSource)->mutable_source()->clear_dataset();
  EXPECT_THAT(KindErrorOf(plan, "source"), HasSubstr("source actor has no dataset"));

  plan = TrainingLoop();
  plan.mutable_actor(kSource)->mutable_source()->mutable_dataset()->add_output()->set_name("y");
  EXPECT_THAT(KindErrorOf(plan, "source"),
              HasSubstr("source actor writes 1 outputs, but its dataset has 2"));

  plan = TrainingLoop();
  plan.mutable_actor(kSource)->mutable_source()->set_sample_end(0);
  EXPECT_THAT(KindErrorOf(plan, "source"), HasSubstr("source actor has an empty sample slice "
                                                     "[0, 0)"));
  plan.mutable_actor(kSource)->mutable_source()->set_sample_begin(-1);
  EXPECT_THAT(KindErrorOf(plan, "source"), HasSubstr("has an empty sample slice [-1, 0)"));
}

TEST(ActorKindRulesTest, AComputeRunsAnOpPerPieceOrPerStepAndWritesItsOwnPeriod) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kForward)->mutable_kernel()->clear_op_type();
  EXPECT_EQ(KindErrorOf(plan, "forward"), "actor 'forward' (2): compute actor has no op type");

  PlanBuilder builder(2, 2);
  builder.AddRegister("x", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"relu", proto::ACTOR_KIND_COMPUTE, {"x"}, {}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "relu"),
              HasSubstr("compute actor writes at least 1 outputs, has 0"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("y", 1);
  builder.AddActor({"fill", proto::ACTOR_KIND_COMPUTE, {}, {"y"}, /*period=*/4});
  EXPECT_THAT(KindErrorOf(builder.Build(), "fill"),
              HasSubstr("compute actor has period 4, must be 1 or pieces_per_step 2"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("x", 1).AddRegister("y", 1, /*period=*/2);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"relu", proto::ACTOR_KIND_COMPUTE, {"x"}, {"y"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "relu"),
              HasSubstr("actor 'relu' (1): compute actor writes register 'y' (1) with period 2, "
                        "must be its own period 1 (only accumulate actors write longer fills)"));
}

TEST(ActorKindRulesTest, AVariableWritesOneOneSlotRegisterOncePerStepAndNamesItsVariable) {
  PlanBuilder builder(2, 1);
  builder.AddRegister("x", 1).AddRegister("w", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {"x"}, {"w"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "weight"),
              HasSubstr("variable actor takes 0 inputs, has 1"));

  builder = PlanBuilder(2, 1);
  builder.AddRegister("w", 1).AddRegister("v", 1);
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w", "v"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "weight"),
              HasSubstr("variable actor writes 1 outputs, has 2"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("w", 1);
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}, /*period=*/1});
  EXPECT_THAT(KindErrorOf(builder.Build(), "weight"),
              HasSubstr("variable actor has period 1, must be 2 (one step per firing)"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("w", 1, /*period=*/4);
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "weight"),
              HasSubstr("variable actor moves a value as it is, so register 'w' (0) must have "
                        "its period 2, has 4"));

  builder = PlanBuilder(1, 1);
  builder.AddRegister("w", 2).AddRegister("y", 1);
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  builder.AddActor({"scale", proto::ACTOR_KIND_COMPUTE, {"w"}, {"y"}});
  EXPECT_EQ(KindErrorOf(builder.Build(), "weight"),
            "actor 'weight' (0): variable actor holds one value updated in place, so register "
            "'w' (0) must have 1 slot, has 2");

  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kWeight)->mutable_variable()->clear_variable();
  EXPECT_THAT(KindErrorOf(plan, "weight"), HasSubstr("variable actor names no variable"));
}

TEST(ActorKindRulesTest, AnAccumulateSumsOnePerPieceValueIntoAPerStepSum) {
  PlanBuilder builder(2, 2);
  builder.AddRegister("x", 1).AddRegister("y", 1).AddRegister("sum", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x", "y"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"x", "y"}, {"sum"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "acc"),
              HasSubstr("accumulate actor takes 1 inputs, has 2"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("x", 1).AddRegister("sum", 1).AddRegister("other", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"x"}, {"sum", "other"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "acc"),
              HasSubstr("accumulate actor writes 1 outputs, has 2"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("w", 1).AddRegister("sum", 1);
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"w"}, {"sum"}, /*period=*/2});
  EXPECT_THAT(KindErrorOf(builder.Build(), "acc"),
              HasSubstr("accumulate actor has period 2, must be 1 (one piece per firing)"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("w", 1).AddRegister("sum", 1);
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"w"}, {"sum"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "acc"),
              HasSubstr("accumulate actor sums a per-piece value, but register 'w' (0) has "
                        "period 2"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("x", 1).AddRegister("sum", 1, /*period=*/1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"x"}, {"sum"}});
  EXPECT_EQ(KindErrorOf(builder.Build(), "acc"),
            "actor 'acc' (1): accumulate actor writes a per-step sum, so register 'sum' (1) must "
            "have period 2, has 1");
}

// The update's cases change TrainingLoop's update (actor 4) or what it reads.
proto::Plan TrainingLoopWithUpdate(const ActorSpec& update, int64_t g_period = 0,
                                   proto::ActorKind weight_kind = proto::ACTOR_KIND_VARIABLE) {
  PlanBuilder builder(2, 2);
  builder.AddRegister("x", 2).AddRegister("w", 1).AddRegister("dw", 1);
  builder.AddRegister("g", 1, g_period).AddRegister("loss", 1);
  if (!update.outputs.empty()) builder.AddRegister("extra", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"weight", weight_kind, {}, {"w"}, /*period=*/2});
  builder.AddActor({"forward", proto::ACTOR_KIND_COMPUTE, {"x", "w"}, {"dw", "loss"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"dw"}, {"g"}});
  builder.AddActor(update);
  builder.AddActor({"report", proto::ACTOR_KIND_SINK, {"loss"}, {}});
  return builder.Build();
}

TEST(ActorKindRulesTest, AnUpdateReadsAGradientAndWritesAVariableInPlaceOncePerStep) {
  using Spec = ActorSpec;
  const proto::ActorKind update = proto::ACTOR_KIND_UPDATE;
  EXPECT_TRUE(
      CheckActorKindRules(TrainingLoopWithUpdate(Spec("update", update, {"g", "w"}, {}, 0, {"w"})))
          .ok());
  EXPECT_THAT(KindErrorOf(TrainingLoopWithUpdate(Spec("update", update, {"g"}, {})), "update"),
              HasSubstr("update actor takes 2 to 3 inputs, has 1"));
  EXPECT_THAT(
      KindErrorOf(TrainingLoopWithUpdate(Spec("update", update, {"g", "w"}, {"extra"}, 0, {"w"})),
                  "update"),
      HasSubstr("update actor writes 0 outputs, has 1"));
  EXPECT_THAT(KindErrorOf(TrainingLoopWithUpdate(Spec("update", update, {"g", "w"}, {}, 1, {"w"})),
                          "update"),
              HasSubstr("update actor has period 1, must be 2 (one step per firing)"));
  EXPECT_THAT(
      KindErrorOf(TrainingLoopWithUpdate(Spec("update", update, {"g", "w"}, {}, 0, {"w"}), 4),
                  "update"),
      HasSubstr("update actor moves a value as it is, so register 'g' (3) must have its period "
                "2, has 4"));
  EXPECT_THAT(KindErrorOf(TrainingLoopWithUpdate(Spec("update", update, {"w", "w"}, {}, 0, {"w"})),
                          "update"),
              HasSubstr("update actor reads the same register as gradient and variable"));
  EXPECT_THAT(
      KindErrorOf(TrainingLoopWithUpdate(Spec("update", update, {"g", "w"}, {}, 0, {"g", "w"})),
                  "update"),
      HasSubstr("update actor must read its gradient register 'g' (3) in phase 0"));
  EXPECT_EQ(KindErrorOf(TrainingLoopWithUpdate(Spec("update", update, {"g", "w"}, {})), "update"),
            "actor 'update' (4): update actor writes its variable in place, so it must be the "
            "phase-1 consumer of register 'w' (1)");
  EXPECT_THAT(KindErrorOf(TrainingLoopWithUpdate(Spec("update", update, {"g", "w"}, {}, 0, {"w"}),
                                                 0, proto::ACTOR_KIND_COMPUTE),
                          "update"),
              HasSubstr("update actor updates register 'w' (1), which is written by weight, not "
                        "by a variable actor"));

  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kUpdate)->mutable_update()->clear_optimizer();
  EXPECT_EQ(KindErrorOf(plan, "update"), "actor 'update' (4): update actor has no optimizer");
}

// TrainingLoop with the variable's bf16 copy `wb` (fold_weight_casts): a first_firing_only
// cast of `w` writes it, the update also writes it in place (`copy_phase`).
proto::Plan TrainingLoopWithCopy(int copy_phase) {
  PlanBuilder builder(2, 2);
  builder.AddRegister("x", 2).AddRegister("w", 1).AddRegister("dw", 1);
  builder.AddRegister("g", 1, 2).AddRegister("loss", 1).AddRegister("wb", 1, 2);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}, /*period=*/2});
  builder.AddActor({"copy", proto::ACTOR_KIND_COMPUTE, {"w"}, {"wb"}, /*period=*/2});
  builder.AddActor({"forward", proto::ACTOR_KIND_COMPUTE, {"x", "wb"}, {"dw", "loss"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"dw"}, {"g"}});
  builder.AddActor(
      {"update",
       proto::ACTOR_KIND_UPDATE,
       {"g", "w", "wb"},
       {},
       0,
       copy_phase == 1 ? std::vector<std::string>{"w", "wb"} : std::vector<std::string>{"w"}});
  builder.AddActor({"report", proto::ACTOR_KIND_SINK, {"loss"}, {}});
  proto::Plan plan = builder.Build();
  plan.mutable_register_def(5)->mutable_tensor()->set_dtype(proto::DATA_TYPE_BFLOAT16);
  proto::KernelDef* cast = plan.mutable_actor(2)->mutable_kernel();
  cast->set_op_type("cast");
  proto::Attribute* once = cast->add_attr();
  once->set_name("first_firing_only");
  once->set_bool_(true);
  return plan;
}

TEST(ActorKindRulesTest, AnUpdateMayWriteItsVariablesBf16CopyMadeByAFirstFiringOnlyCast) {
  EXPECT_TRUE(CheckActorKindRules(TrainingLoopWithCopy(1)).ok())
      << CheckActorKindRules(TrainingLoopWithCopy(1));
  EXPECT_THAT(KindErrorOf(TrainingLoopWithCopy(0), "update"),
              HasSubstr("in place, so it must be its phase-1 consumer"));
  proto::Plan float32_copy = TrainingLoopWithCopy(1);
  float32_copy.mutable_register_def(5)->mutable_tensor()->set_dtype(proto::DATA_TYPE_FLOAT32);
  EXPECT_THAT(KindErrorOf(float32_copy, "update"),
              HasSubstr("as the bfloat16 copy of register 'w' (1), but it is not bfloat16"));
  proto::Plan every_step = TrainingLoopWithCopy(1);
  every_step.mutable_actor(2)->mutable_kernel()->clear_attr();
  EXPECT_THAT(KindErrorOf(every_step, "update"),
              HasSubstr("which copy must make as a first_firing_only cast of register 'w' (1)"));
}

TEST(ActorKindRulesTest, ASinkReportsOneFloat32ScalarPerPieceUnderItsOutputsName) {
  PlanBuilder builder(2, 1);
  builder.AddRegister("x", 1).AddRegister("y", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x", "y"}});
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {"x", "y"}, {}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "sink"), HasSubstr("sink actor takes 1 inputs, has 2"));

  builder = PlanBuilder(2, 1);
  builder.AddRegister("x", 1).AddRegister("y", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {"x"}, {"y"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "sink"),
              HasSubstr("sink actor writes 0 outputs, has 1"));

  builder = PlanBuilder(2, 2);
  builder.AddRegister("w", 1);
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {"w"}, {}, /*period=*/2});
  EXPECT_THAT(KindErrorOf(builder.Build(), "sink"),
              HasSubstr("sink actor has period 2, must be 1 (one value per piece)"));

  proto::Plan plan = TrainingLoop();
  plan.mutable_register_def(kLoss)->mutable_tensor()->add_dims(2);  // No longer a scalar.
  plan.mutable_register_def(kLoss)->set_bytes_per_slot(8);
  plan.mutable_device(0)->set_planned_bytes(1000);
  EXPECT_EQ(KindErrorOf(plan, "report"),
            "actor 'report' (5): sink actor reports a float32 scalar, but register 'loss' (4) "
            "holds something else");
  plan = TrainingLoop();
  plan.mutable_register_def(kLoss)->mutable_tensor()->set_dtype(proto::DATA_TYPE_INT32);
  EXPECT_THAT(KindErrorOf(plan, "report"), HasSubstr("sink actor reports a float32 scalar"));

  plan = TrainingLoop();
  plan.mutable_actor(kReport)->mutable_sink()->clear_output();
  EXPECT_THAT(KindErrorOf(plan, "report"), HasSubstr("sink actor names no output"));
}

TEST(ActorKindRulesTest, ACopyMovesOneValueAsItIsOrABlockOfIt) {
  PlanBuilder builder(2, 1);
  builder.AddRegister("y", 1);
  builder.AddActor({"copy", proto::ACTOR_KIND_COPY, {}, {"y"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "copy"), HasSubstr("copy actor takes 1 inputs, has 0"));

  builder = PlanBuilder(2, 1);
  builder.AddRegister("x", 1).AddRegister("y", 1).AddRegister("z", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"copy", proto::ACTOR_KIND_COPY, {"x"}, {"y", "z"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "copy"),
              HasSubstr("copy actor writes 1 outputs, has 2"));

  builder = PlanBuilder(2, 1);
  builder.AddRegister("x", 1).AddRegister("y", 1, /*period=*/2);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"copy", proto::ACTOR_KIND_COPY, {"x"}, {"y"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "copy"),
              HasSubstr("copy actor moves a value as it is, so register 'y' (1) must have its "
                        "period 1, has 2"));

  builder = PlanBuilder(1, 1);
  builder.AddRegister("x", 2, 0, {8, 6}).AddRegister("block", 2, 0, {4, 6});
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"x.from0", proto::ACTOR_KIND_COPY, {"x"}, {"block"}});
  proto::Plan plan = builder.Build();
  plan.mutable_actor(1)->mutable_kernel()->set_op_type("copy");
  EXPECT_EQ(KindErrorOf(plan, "x.from0"),
            "actor 'x.from0' (1): copy actor copies bytes, so register 'x' (0) and register "
            "'block' (1) must hold the same tensor");
  plan.mutable_actor(1)->mutable_kernel()->set_op_type("slice");
  EXPECT_TRUE(CheckActorKind(plan, plan.actor(1)).ok()) << CheckActorKind(plan, plan.actor(1));
  plan.mutable_register_def(1)->mutable_tensor()->set_dims(0, 2);  // [2, 12]: as many bytes.
  plan.mutable_register_def(1)->mutable_tensor()->set_dims(1, 12);
  EXPECT_THAT(KindErrorOf(plan, "x.from0"),
              HasSubstr("copy actor slices, so register 'block' (1) must hold a block of "
                        "register 'x' (0) (same dtype and rank, no larger extent)"));
}

TEST(ActorKindRulesTest, ASendHandsOneValueToRecvActorsOnly) {
  PlanBuilder builder(2, 1);
  builder.AddRegister("wire", 1);
  builder.AddActor({"send", proto::ACTOR_KIND_SEND, {}, {"wire"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "send"), HasSubstr("send actor takes 1 inputs, has 0"));

  builder = PlanBuilder(2, 1);
  builder.AddRegister("x", 1).AddRegister("a", 1).AddRegister("b", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"send", proto::ACTOR_KIND_SEND, {"x"}, {"a", "b"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "send"),
              HasSubstr("send actor writes 0 to 1 outputs, has 2"));

  builder = PlanBuilder(2, 1);
  builder.AddRegister("x", 1).AddRegister("wire", 1, /*period=*/2);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"send", proto::ACTOR_KIND_SEND, {"x"}, {"wire"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "send"),
              HasSubstr("send actor moves a value as it is, so register 'wire' (1) must have its "
                        "period 1, has 2"));

  proto::Plan plan = MovingAValue();
  plan.mutable_actor(3)->set_kind(proto::ACTOR_KIND_COMPUTE);  // recv -> a compute actor.
  EXPECT_EQ(KindErrorOf(plan, "send"),
            "actor 'send' (2): send actor hands register 'wire' (2) only to recv actors, but recv "
            "reads it");
}

TEST(ActorKindRulesTest, ASendMayHaveSeveralFillsInFlightButARecvMayNot) {
  proto::Plan plan = MovingAValue();
  plan.mutable_actor(2)->set_max_in_flight(8);  // send: its transfers go out in order.
  EXPECT_TRUE(CheckActorKindRules(plan).ok()) << CheckActorKindRules(plan);
  EXPECT_EQ(MaxInFlight(plan.actor(2)), 8);

  plan = MovingAValue();
  plan.mutable_actor(3)->set_max_in_flight(2);  // recv.
  EXPECT_EQ(KindErrorOf(plan, "recv"),
            "actor 'recv' (3): recv actor has max_in_flight 2, but only compute, copy and send "
            "actors may have more than one firing in flight");
}

TEST(ActorKindRulesTest, ARecvWritesOneValueReadOnlyFromASendActor) {
  PlanBuilder builder(2, 1);
  builder.AddRegister("x", 1).AddRegister("y", 1).AddRegister("z", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x", "y"}});
  builder.AddActor({"recv", proto::ACTOR_KIND_RECV, {"x", "y"}, {"z"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "recv"),
              HasSubstr("recv actor takes 0 to 1 inputs, has 2"));

  builder = PlanBuilder(2, 1);
  builder.AddActor({"recv", proto::ACTOR_KIND_RECV, {}, {}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "recv"),
              HasSubstr("recv actor writes 1 outputs, has 0"));

  builder = PlanBuilder(2, 1);
  builder.AddRegister("z", 1, /*period=*/2);
  builder.AddActor({"recv", proto::ACTOR_KIND_RECV, {}, {"z"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "recv"),
              HasSubstr("recv actor moves a value as it is, so register 'z' (0) must have its "
                        "period 1, has 2"));

  proto::Plan plan = MovingAValue();
  plan.mutable_actor(2)->set_kind(proto::ACTOR_KIND_COPY);  // send -> a copy actor.
  EXPECT_EQ(KindErrorOf(plan, "recv"),
            "actor 'recv' (3): recv actor reads register 'wire' (2) only from a send actor, but "
            "send writes it");
}

TEST(ActorKindRulesTest, ABoxingWritesAtLeastOnePartAsTheValue) {
  PlanBuilder builder(2, 1);
  builder.AddRegister("zeros", 1);
  builder.AddActor({"fill", proto::ACTOR_KIND_BOXING, {}, {"zeros"}});
  const proto::Plan fill = builder.Build();
  EXPECT_TRUE(CheckActorKind(fill, fill.actor(0)).ok()) << CheckActorKind(fill, fill.actor(0));

  builder = PlanBuilder(2, 1);
  builder.AddRegister("x", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"concat", proto::ACTOR_KIND_BOXING, {"x"}, {}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "concat"),
              HasSubstr("boxing actor writes at least 1 outputs, has 0"));

  builder = PlanBuilder(2, 1);
  builder.AddRegister("x", 1).AddRegister("y", 1, /*period=*/2);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"concat", proto::ACTOR_KIND_BOXING, {"x"}, {"y"}});
  EXPECT_THAT(KindErrorOf(builder.Build(), "concat"),
              HasSubstr("boxing actor moves a value as it is, so register 'y' (1) must have its "
                        "period 1, has 2"));
}

TEST(ActorKindRulesTest, EachOutputIsReportedByASinkNamingIt) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_output(0)->set_sink_actor(kForward);
  EXPECT_EQ(ErrorOf(plan), "output 'loss': actor 'forward' (2) is not a sink reporting it");
  plan = TrainingLoop();
  plan.mutable_actor(kReport)->mutable_sink()->set_output("accuracy");
  EXPECT_EQ(ErrorOf(plan), "output 'loss': actor 'report' (5) is not a sink reporting it");
}

TEST(ActorKindRulesTest, EachVariablePartIsWrittenByAVariableActor) {
  proto::Plan plan = TrainingLoop();
  proto::PlanVariable* variable = plan.add_variable();
  variable->set_name("w");
  variable->add_part()->set_register_id(kW);
  EXPECT_TRUE(CheckActorKindRules(plan).ok()) << CheckActorKindRules(plan);
  variable->add_part()->set_register_id(kDw);
  EXPECT_EQ(ErrorOf(plan),
            "variable 'w': part register 'dw' (2) is not written by a variable "
            "actor");
}

TEST(ActorKindRulesTest, RunsTheActorsInPlanOrderBeforeTheOutputs) {
  proto::Plan plan = TrainingLoop();
  plan.mutable_actor(kUpdate)->mutable_update()->clear_optimizer();
  plan.mutable_output(0)->set_sink_actor(kForward);
  EXPECT_THAT(ErrorOf(plan), HasSubstr("update actor has no optimizer"));
  plan.mutable_actor(kSource)->clear_source();
  EXPECT_THAT(ErrorOf(plan), HasSubstr("source actor has no source settings"));
}

}  // namespace
}  // namespace plan
}  // namespace softwire
