// BuildTraceModel derives waits, slot occupancy and flows from what an engine records.
#include "trace/trace_model.h"

#include <gtest/gtest.h>

namespace softwire {
namespace trace {
namespace {

// producer (source) -> r (1 slot, 128 bytes) -> consumer (compute), one device, 2 pieces.
PlanFacts OneSlotPair() {
  PlanFacts plan;
  plan.job_name = "pair";
  plan.steps = 2;
  plan.pieces_per_step = 1;
  plan.devices.push_back(DeviceFacts{"node0/cpu:0", "node0", "cpu", 1000, 128, 0, 0, "sw:cpu0/k*"});
  ActorFacts producer;
  producer.name = "producer";
  producer.kind = "source";
  producer.firings = 2;
  producer.outputs = {0};
  ActorFacts consumer;
  consumer.name = "consumer";
  consumer.kind = "compute";
  consumer.firings = 2;
  consumer.inputs = {0};
  plan.actors = {producer, consumer};
  RegisterFacts r;
  r.name = "r";
  r.producer = 0;
  r.slots = 1;
  r.bytes_per_slot = 128;
  r.consumers = {1};
  plan.registers = {r};
  return plan;
}

// What an engine records for OneSlotPair, times in ns after origin 1000:
//   producer 0 [0, 10]   (its Ready leaves at 10)
//   consumer 0 launch 15, runs [15, 40] (releases fill 0 at 40)
//   producer 1 [40, 50] (the slot came back)
//   consumer 1 launch 50, runs [60, 70] (queued behind its device), releases at 70
TraceLog PairLog() {
  TraceLog log;
  log.plan = OneSlotPair();
  log.info.engine = "test";
  log.info.origin_ns = 1000;
  const TimeNs o = 1000;
  log.events = {
      FiringEvent(0, 0, o + 0, o + 0, o + 10, CauseKind::kStart, -1, -1, -1),
      FiringEvent(1, 0, o + 15, o + 15, o + 40, CauseKind::kInput, 0, 0, 0),
      FiringEvent(0, 1, o + 40, o + 40, o + 50, CauseKind::kSlot, 1, 0, 0),
      FiringEvent(1, 1, o + 50, o + 60, o + 70, CauseKind::kInput, 0, 0, 1),
  };
  return log;
}

TEST(TraceModelTest, FiringsKeepTheirTimesAndCausesOnTheTraceClock) {
  StatusOr<TraceModel> model = BuildTraceModel(PairLog());
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->firings.size(), 4u);
  const FiringRecord& last = model->firings.back();
  EXPECT_EQ(last.actor, 1);
  EXPECT_EQ(last.firing, 1);
  EXPECT_EQ(last.launch, 50);
  EXPECT_EQ(last.start, 60);
  EXPECT_EQ(last.end, 70);
  EXPECT_EQ(last.cause.kind, CauseKind::kInput);
  EXPECT_EQ(model->span_begin(), 0);
  EXPECT_EQ(model->span_end(), 70);
}

TEST(TraceModelTest, WaitsSayStarvedThenQueuedAndBlockedOnTheHolder) {
  StatusOr<TraceModel> model = BuildTraceModel(PairLog());
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<WaitRecord> producer;
  std::vector<WaitRecord> consumer;
  for (const WaitRecord& wait : model->waits) {
    (wait.actor == 0 ? producer : consumer).push_back(wait);
  }
  // The producer waited [10, 40] for its only slot, held by the consumer.
  ASSERT_EQ(producer.size(), 1u);
  EXPECT_EQ(producer[0].kind, WaitKind::kBlocked);
  EXPECT_EQ(producer[0].start, 10);
  EXPECT_EQ(producer[0].end, 40);
  EXPECT_EQ(producer[0].register_id, 0);
  EXPECT_EQ(producer[0].sequence, 0);
  EXPECT_EQ(producer[0].waiting_on, std::vector<int32_t>{1});
  // The consumer: starved [0, 10], queued [10, 15] (the Ready was in flight), then starved
  // [40, 50] for fill 1, then queued [50, 60] behind its device.
  ASSERT_EQ(consumer.size(), 4u);
  EXPECT_EQ(consumer[0].kind, WaitKind::kStarved);
  EXPECT_EQ(consumer[0].start, 0);
  EXPECT_EQ(consumer[0].end, 10);
  EXPECT_EQ(consumer[0].waiting_on, std::vector<int32_t>{0});
  EXPECT_EQ(consumer[1].kind, WaitKind::kQueued);
  EXPECT_EQ(consumer[1].start, 10);
  EXPECT_EQ(consumer[1].end, 15);
  EXPECT_EQ(consumer[2].kind, WaitKind::kStarved);
  EXPECT_EQ(consumer[2].sequence, 1);
  EXPECT_EQ(consumer[2].start, 40);
  EXPECT_EQ(consumer[2].end, 50);
  EXPECT_EQ(consumer[3].kind, WaitKind::kQueued);
  EXPECT_EQ(consumer[3].end, 60);
}

TEST(TraceModelTest, SlotOccupancyRisesAtLaunchAndFallsWhenTheLastConsumerReleased) {
  StatusOr<TraceModel> model = BuildTraceModel(PairLog());
  ASSERT_TRUE(model.ok()) << model.status();
  std::vector<std::pair<TimeNs, int32_t>> points;
  for (const CounterRecord& counter : model->counters) {
    EXPECT_EQ(counter.register_id, 0);
    points.emplace_back(counter.time, counter.occupied);
  }
  // Taken at 0; at 40 freed and taken again in one instant; freed at 70.
  EXPECT_EQ(points, (std::vector<std::pair<TimeNs, int32_t>>{{0, 1}, {40, 1}, {70, 0}}));
}

TEST(TraceModelTest, EachReadyBecomesAFlowBetweenTheTwoFirings) {
  StatusOr<TraceModel> model = BuildTraceModel(PairLog());
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->flows.size(), 2u);
  EXPECT_EQ(model->flows[1].producer, 0);
  EXPECT_EQ(model->flows[1].producer_firing, 1);
  EXPECT_EQ(model->flows[1].consumer, 1);
  EXPECT_EQ(model->flows[1].consumer_firing, 1);
  EXPECT_EQ(model->flows[1].sent, 50);
}

TEST(TraceModelTest, AFlowWithAnEndOutsideTheRecordingIsLeftOut) {
  TraceLog log = PairLog();
  log.events.erase(log.events.begin() + 3);  // The consumer's second firing was not recorded.
  StatusOr<TraceModel> model = BuildTraceModel(log);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->flows.size(), 1u);
}

TEST(TraceModelTest, InconsistentPlanFactsAreRefusedAndUnknownActorsSkipped) {
  TraceLog log = PairLog();
  log.events.push_back(FiringEvent(57, 0, 0, 0, 1, CauseKind::kStart, -1, -1, -1));
  StatusOr<TraceModel> model = BuildTraceModel(log);
  ASSERT_TRUE(model.ok());
  EXPECT_EQ(model->firings.size(), 4u);
  log.plan.registers[0].producer = 9;
  StatusOr<TraceModel> bad = BuildTraceModel(log);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("register 0 ('r'): bad producer"), std::string::npos)
      << bad.status();
}

}  // namespace
}  // namespace trace
}  // namespace softwire
