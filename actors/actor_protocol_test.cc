// Exact message order of the protocol (docs/PROTOCOL.md) on small plans. ProtocolTestHost
// delivers messages first-in first-out and completes every kernel as soon as it launches, so
// each transcript below is the one order the protocol allows; the comments say why each line
// comes where it does.
#include "actors/actor_protocol.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "actors/testing/protocol_test_host.h"
#include "actors/testing/timed_completions.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace {

using plan::testing::ActorSpec;
using plan::testing::PlanBuilder;
using testing::JoinLines;
using testing::ProtocolTestHost;

std::unique_ptr<ProtocolTestHost> MakeHost(const proto::Plan& plan,
                                           ProtocolTestHost::Options options = {}) {
  StatusOr<std::unique_ptr<ProtocolTestHost>> host = ProtocolTestHost::Create(plan, options);
  EXPECT_TRUE(host.ok()) << host.status();
  return std::move(host).value();
}

proto::Plan Chain(int64_t pieces, int slots) {
  PlanBuilder plan(pieces, 1);
  plan.AddRegister("x", slots).AddRegister("y", slots);
  plan.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  plan.AddActor({"relu", proto::ACTOR_KIND_COMPUTE, {"x"}, {"y"}});
  plan.AddActor({"sink", proto::ACTOR_KIND_SINK, {"y"}, {}});
  return plan.Build();
}

TEST(ActorProtocolTest, AOneSlotChainMakesEachProducerWaitForTheRelease) {
  std::unique_ptr<ProtocolTestHost> host = MakeHost(Chain(2, 1));
  host->Start();
  ASSERT_TRUE(host->Run().ok());
  const std::vector<std::string> expected = {
      "source: launch 0",
      "source -> relu: Ready(x, slot 0, seq 0)",  // Fill 1 needs slot 0 back: source blocks.
      "relu: launch 0",
      "relu -> source: Release(x, slot 0, seq 0)",  // Release first, then Ready.
      "relu -> sink: Ready(y, slot 0, seq 0)",
      "source: launch 1",
      "source -> relu: Ready(x, slot 0, seq 1)",
      "source -> relu: EndOfStream(x)",  // After the last firing's Readies.
      "sink: launch 0",
      "sink -> relu: Release(y, slot 0, seq 0)",  // relu had x1 but waited for y's slot.
      "relu: launch 1",
      "relu -> source: Release(x, slot 0, seq 1)",
      "relu -> sink: Ready(y, slot 0, seq 1)",
      "relu -> sink: EndOfStream(y)",
      "source: finished",  // Its last slot came back.
      "sink: launch 1",
      "sink -> relu: Release(y, slot 0, seq 1)",
      "sink: finished",  // On EndOfStream(y).
      "relu: finished",  // On the Release of y1.
  };
  EXPECT_EQ(JoinLines(host->transcript()), JoinLines(expected));
  EXPECT_TRUE(host->AllFinished());
}

TEST(ActorProtocolTest, ATwoSlotChainLetsTheProducerRunTwoFillsAhead) {
  std::unique_ptr<ProtocolTestHost> host = MakeHost(Chain(3, 2));
  host->Start();
  ASSERT_TRUE(host->Run().ok());
  const std::vector<std::string> expected = {
      "source: launch 0",
      "source -> relu: Ready(x, slot 0, seq 0)",
      "source: launch 1",  // The second slot is free: no need to wait.
      "source -> relu: Ready(x, slot 1, seq 1)",
      "relu: launch 0",
      "relu -> source: Release(x, slot 0, seq 0)",
      "relu -> sink: Ready(y, slot 0, seq 0)",
      "relu: launch 1",
      "relu -> source: Release(x, slot 1, seq 1)",
      "relu -> sink: Ready(y, slot 1, seq 1)",
      "source: launch 2",  // Fill 2 goes round to slot 0.
      "source -> relu: Ready(x, slot 0, seq 2)",
      "source -> relu: EndOfStream(x)",
      "sink: launch 0",
      "sink -> relu: Release(y, slot 0, seq 0)",
      "sink: launch 1",
      "sink -> relu: Release(y, slot 1, seq 1)",
      "relu: launch 2",  // Both y slots were full until the Release of y0.
      "relu -> source: Release(x, slot 0, seq 2)",
      "relu -> sink: Ready(y, slot 0, seq 2)",
      "relu -> sink: EndOfStream(y)",
      "source: finished",
      "sink: launch 2",
      "sink -> relu: Release(y, slot 0, seq 2)",
      "sink: finished",
      "relu: finished",
  };
  EXPECT_EQ(JoinLines(host->transcript()), JoinLines(expected));
}

TEST(ActorProtocolTest, AFannedOutSlotIsFreeOnlyWhenEveryConsumerReleasedIt) {
  PlanBuilder builder(2, 1);
  builder.AddRegister("x", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"left", proto::ACTOR_KIND_SINK, {"x"}, {}});
  builder.AddActor({"right", proto::ACTOR_KIND_SINK, {"x"}, {}});
  std::unique_ptr<ProtocolTestHost> host = MakeHost(builder.Build());
  host->Start();
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(host->Step().value());
  const std::vector<std::string> before_release = {
      "source: launch 0",
      "source -> left: Ready(x, slot 0, seq 0)",  // Consumers in plan order.
      "source -> right: Ready(x, slot 0, seq 0)",
      "left: launch 0",
      "left -> source: Release(x, slot 0, seq 0)",
      "right: launch 0",
      "right -> source: Release(x, slot 0, seq 0)",
  };
  EXPECT_EQ(JoinLines(host->TakeTranscript()), JoinLines(before_release));
  ASSERT_TRUE(host->Step().value());  // left's Release: right still holds the slot.
  EXPECT_TRUE(host->TakeTranscript().empty());
  WaitState wait = host->protocol("source").DescribeWait();
  EXPECT_EQ(wait.kind, WaitState::Kind::kBlocked);
  EXPECT_EQ(wait.register_id, 0);
  EXPECT_EQ(wait.sequence, 0);
  EXPECT_EQ(wait.waiting_on, std::vector<ActorId>{host->id("right")});
  EXPECT_EQ(host->protocol("source").occupied_slots(0), 1);
  ASSERT_TRUE(host->Run().ok());
  const std::vector<std::string> after_release = {
      "source: launch 1",
      "source -> left: Ready(x, slot 0, seq 1)",
      "source -> right: Ready(x, slot 0, seq 1)",
      "source -> left: EndOfStream(x)",
      "source -> right: EndOfStream(x)",
      "left: launch 1",
      "left -> source: Release(x, slot 0, seq 1)",
      "right: launch 1",
      "right -> source: Release(x, slot 0, seq 1)",
      "left: finished",
      "right: finished",
      "source: finished",
  };
  EXPECT_EQ(JoinLines(host->TakeTranscript()), JoinLines(after_release));
}

TEST(ActorProtocolTest, APerStepInputIsHeldAcrossTheStepAndReleasedAfterItsLastPiece) {
  PlanBuilder builder(2, 2);
  builder.AddRegister("x", 1).AddRegister("w", 1).AddRegister("y", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  builder.AddActor({"mul", proto::ACTOR_KIND_COMPUTE, {"x", "w"}, {"y"}});
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {"y"}, {}});
  std::vector<std::string> mul_bindings;
  ProtocolTestHost::Options options;
  options.on_launch = [&](ActorId actor, const Firing& firing) {
    if (actor != 2) return;
    mul_bindings.push_back("x" + std::to_string(firing.inputs[0].sequence) + " w" +
                           std::to_string(firing.inputs[1].sequence));
  };
  std::unique_ptr<ProtocolTestHost> host = MakeHost(builder.Build(), options);
  host->Start();
  ASSERT_TRUE(host->Run().ok());
  EXPECT_EQ(mul_bindings, (std::vector<std::string>{"x0 w0", "x1 w0", "x2 w1", "x3 w1"}));
  const std::vector<std::string> expected = {
      "source: launch 0",
      "source -> mul: Ready(x, slot 0, seq 0)",
      "weight: launch 0",
      "weight -> mul: Ready(w, slot 0, seq 0)",
      "mul: launch 0",
      "mul -> source: Release(x, slot 0, seq 0)",  // w0 is kept for piece 1.
      "mul -> sink: Ready(y, slot 0, seq 0)",
      "source: launch 1",
      "source -> mul: Ready(x, slot 0, seq 1)",
      "sink: launch 0",
      "sink -> mul: Release(y, slot 0, seq 0)",
      "mul: launch 1",
      "mul -> source: Release(x, slot 0, seq 1)",
      "mul -> weight: Release(w, slot 0, seq 0)",  // The step's last piece: inputs in order.
      "mul -> sink: Ready(y, slot 0, seq 1)",
      "source: launch 2",
      "source -> mul: Ready(x, slot 0, seq 2)",
      "weight: launch 1",
      "weight -> mul: Ready(w, slot 0, seq 1)",
      "weight -> mul: EndOfStream(w)",
      "sink: launch 1",
      "sink -> mul: Release(y, slot 0, seq 1)",
      "mul: launch 2",
      "mul -> source: Release(x, slot 0, seq 2)",
      "mul -> sink: Ready(y, slot 0, seq 2)",
      "source: launch 3",
      "source -> mul: Ready(x, slot 0, seq 3)",
      "source -> mul: EndOfStream(x)",
      "sink: launch 2",
      "sink -> mul: Release(y, slot 0, seq 2)",
      "mul: launch 3",
      "mul -> source: Release(x, slot 0, seq 3)",
      "mul -> weight: Release(w, slot 0, seq 1)",
      "mul -> sink: Ready(y, slot 0, seq 3)",
      "mul -> sink: EndOfStream(y)",
      "source: finished",
      "weight: finished",
      "sink: launch 3",
      "sink -> mul: Release(y, slot 0, seq 3)",
      "sink: finished",
      "mul: finished",
  };
  EXPECT_EQ(JoinLines(host->transcript()), JoinLines(expected));
}

TEST(ActorProtocolTest, AnAccumulateBeginsAFillOnTheStepsFirstPieceAndOffersItAfterTheLast) {
  PlanBuilder builder(2, 2);
  builder.AddRegister("x", 2).AddRegister("g", 1).AddRegister("delta", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"x"}, {"g"}});
  builder.AddActor({"apply", proto::ACTOR_KIND_COMPUTE, {"g"}, {"delta"}, /*period=*/2});
  std::vector<bool> begins;
  ProtocolTestHost::Options options;
  options.on_launch = [&](ActorId actor, const Firing& firing) {
    if (actor == 1) begins.push_back(firing.output_fill_begins[0]);
  };
  std::unique_ptr<ProtocolTestHost> host = MakeHost(builder.Build(), options);
  host->Start();
  ASSERT_TRUE(host->Run().ok());
  EXPECT_EQ(begins, (std::vector<bool>{true, false, true, false}));
  const std::vector<std::string> expected = {
      "source: launch 0",
      "source -> acc: Ready(x, slot 0, seq 0)",
      "source: launch 1",
      "source -> acc: Ready(x, slot 1, seq 1)",
      "acc: launch 0",  // Begins g0: no Ready yet.
      "acc -> source: Release(x, slot 0, seq 0)",
      "acc: launch 1",  // Continues g0 and completes it.
      "acc -> source: Release(x, slot 1, seq 1)",
      "acc -> apply: Ready(g, slot 0, seq 0)",
      "source: launch 2",
      "source -> acc: Ready(x, slot 0, seq 2)",
      "source: launch 3",
      "source -> acc: Ready(x, slot 1, seq 3)",
      "source -> acc: EndOfStream(x)",
      "apply: launch 0",  // delta has no consumer: its slot is free at once.
      "apply -> acc: Release(g, slot 0, seq 0)",
      "acc: launch 2",  // Begins g1 once g0's only slot came back.
      "acc -> source: Release(x, slot 0, seq 2)",
      "acc: launch 3",
      "acc -> source: Release(x, slot 1, seq 3)",
      "acc -> apply: Ready(g, slot 0, seq 1)",
      "acc -> apply: EndOfStream(g)",
      "source: finished",
      "apply: launch 1",
      "apply -> acc: Release(g, slot 0, seq 1)",
      "apply: finished",
      "acc: finished",
  };
  EXPECT_EQ(JoinLines(host->transcript()), JoinLines(expected));
}

proto::Plan TrainingLoop(int64_t steps, int64_t pieces_per_step) {
  PlanBuilder builder(steps, pieces_per_step);
  builder.AddRegister("x", 1).AddRegister("w", 1).AddRegister("dw", 1).AddRegister("g", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  builder.AddActor({"forward", proto::ACTOR_KIND_COMPUTE, {"x", "w"}, {"dw"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"dw"}, {"g"}});
  builder.AddActor({"update", proto::ACTOR_KIND_UPDATE, {"g", "w"}, {}, 0, {"w"}});
  return builder.Build();
}

TEST(ActorProtocolTest, TheUpdateWritesTheVariableOnlyAfterEveryReaderOfTheStepReleasedIt) {
  std::unique_ptr<ProtocolTestHost> host = MakeHost(TrainingLoop(2, 2));
  host->Start();
  ASSERT_TRUE(host->Run().ok());
  const std::vector<std::string> expected = {
      "source: launch 0",
      "source -> forward: Ready(x, slot 0, seq 0)",
      "weight: launch 0",
      "weight -> forward: Ready(w, slot 0, seq 0)",  // Phase 0 only: not yet to update.
      "forward: launch 0",
      "forward -> source: Release(x, slot 0, seq 0)",
      "forward -> acc: Ready(dw, slot 0, seq 0)",
      "source: launch 1",
      "source -> forward: Ready(x, slot 0, seq 1)",
      "acc: launch 0",
      "acc -> forward: Release(dw, slot 0, seq 0)",
      "forward: launch 1",
      "forward -> source: Release(x, slot 0, seq 1)",
      "forward -> weight: Release(w, slot 0, seq 0)",
      "forward -> acc: Ready(dw, slot 0, seq 1)",
      "source: launch 2",
      "source -> forward: Ready(x, slot 0, seq 2)",
      "weight -> update: Ready(w, slot 0, seq 0)",  // Every reader released w0.
      "acc: launch 1",
      "acc -> forward: Release(dw, slot 0, seq 1)",
      "acc -> update: Ready(g, slot 0, seq 0)",
      "update: launch 0",  // Step t = 1.
      "update -> acc: Release(g, slot 0, seq 0)",
      "update -> weight: Release(w, slot 0, seq 0)",
      "weight: launch 1",  // w's slot is free only now.
      "weight -> forward: Ready(w, slot 0, seq 1)",
      "weight -> forward: EndOfStream(w)",  // update gets its EndOfStream after its last Ready.
      "forward: launch 2",
      "forward -> source: Release(x, slot 0, seq 2)",
      "forward -> acc: Ready(dw, slot 0, seq 2)",
      "source: launch 3",
      "source -> forward: Ready(x, slot 0, seq 3)",
      "source -> forward: EndOfStream(x)",
      "acc: launch 2",
      "acc -> forward: Release(dw, slot 0, seq 2)",
      "forward: launch 3",
      "forward -> source: Release(x, slot 0, seq 3)",
      "forward -> weight: Release(w, slot 0, seq 1)",
      "forward -> acc: Ready(dw, slot 0, seq 3)",
      "forward -> acc: EndOfStream(dw)",
      "source: finished",
      "weight -> update: Ready(w, slot 0, seq 1)",
      "weight -> update: EndOfStream(w)",
      "acc: launch 3",
      "acc -> forward: Release(dw, slot 0, seq 3)",
      "acc -> update: Ready(g, slot 0, seq 1)",
      "acc -> update: EndOfStream(g)",
      "forward: finished",
      "update: launch 1",
      "update -> acc: Release(g, slot 0, seq 1)",
      "update -> weight: Release(w, slot 0, seq 1)",
      "update: finished",
      "acc: finished",
      "weight: finished",
  };
  EXPECT_EQ(JoinLines(host->transcript()), JoinLines(expected));
}

TEST(ActorProtocolTest, TheTrainingLoopAlternatesVariableAndUpdateForManySteps) {
  constexpr int64_t kSteps = 5;
  ProtocolTestHost::Options options;
  options.order = ProtocolTestHost::Order::kRandom;
  options.complete_immediately = false;
  options.seed = 7;
  // weight and update launches must alternate: weight k, update k, weight k+1, ...
  std::vector<std::string> cycle;
  options.on_launch = [&](ActorId actor, const Firing& firing) {
    if (actor == 1) cycle.push_back("weight " + std::to_string(firing.index));
    if (actor == 4) cycle.push_back("update " + std::to_string(firing.index));
  };
  std::unique_ptr<ProtocolTestHost> host = MakeHost(TrainingLoop(kSteps, 3), options);
  host->Start();
  ASSERT_TRUE(host->Run().ok());
  std::vector<std::string> expected;
  for (int64_t step = 0; step < kSteps; ++step) {
    expected.push_back("weight " + std::to_string(step));
    expected.push_back("update " + std::to_string(step));
  }
  EXPECT_EQ(cycle, expected);
  EXPECT_TRUE(host->AllFinished());
  EXPECT_EQ(host->protocol("forward").completed_firings(), kSteps * 3);
}

TEST(ActorProtocolTest, AnActorReadingOneRegisterTwiceBindsBothInputsAndReleasesOnce) {
  PlanBuilder builder(1, 1);
  builder.AddRegister("x", 1).AddRegister("y", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"square", proto::ACTOR_KIND_COMPUTE, {"x", "x"}, {"y"}});
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {"y"}, {}});
  std::vector<SlotBinding> bindings;
  ProtocolTestHost::Options options;
  options.on_launch = [&](ActorId actor, const Firing& firing) {
    if (actor == 1) bindings = firing.inputs;
  };
  std::unique_ptr<ProtocolTestHost> host = MakeHost(builder.Build(), options);
  host->Start();
  ASSERT_TRUE(host->Run().ok());
  ASSERT_EQ(bindings.size(), 2u);
  EXPECT_EQ(bindings[0].register_id, 0);
  EXPECT_EQ(bindings[1].register_id, 0);
  const std::vector<std::string> expected = {
      "source: launch 0",
      "source -> square: Ready(x, slot 0, seq 0)",
      "source -> square: EndOfStream(x)",
      "square: launch 0",
      "square -> source: Release(x, slot 0, seq 0)",
      "square -> sink: Ready(y, slot 0, seq 0)",
      "square -> sink: EndOfStream(y)",
      "source: finished",
      "sink: launch 0",
      "sink -> square: Release(y, slot 0, seq 0)",
      "sink: finished",
      "square: finished",
  };
  EXPECT_EQ(JoinLines(host->transcript()), JoinLines(expected));
}

}  // namespace
}  // namespace actors
}  // namespace softwire
