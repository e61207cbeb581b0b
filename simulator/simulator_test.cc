// The simulator against closed-form answers on small hand-built plans (latencies set to 0
// unless a test is about them), and its failure modes.
#include "simulator/simulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "plan/testing/plan_builder.h"
#include "simulator/simulation_report.h"
#include "simulator/simulation_trace.h"
#include "trace/trace_recorder.h"

namespace softwire {
namespace simulator {
namespace {

using plan::testing::ActorSpec;
using plan::testing::PlanBuilder;
using ::testing::HasSubstr;

constexpr SimTime kMicrosecond = 1000;

// Where an actor runs and how long its kernel takes.
struct Where {
  int device = 0;
  int queue = 0;
  double seconds = 0;
  int stage = 0;
};

// Moves the actors of a PlanBuilder plan onto `device_nodes.size()` sim devices (device i on
// node device_nodes[i]); registers live on their producer's device, each device's arena laid
// out again. Actors not named in `where` stay on device 0, queue 0, taking no time.
proto::Plan Place(proto::Plan plan, const std::vector<std::string>& device_nodes,
                  const std::map<std::string, Where>& where) {
  plan.clear_device();
  for (size_t i = 0; i < device_nodes.size(); ++i) {
    proto::PlanDevice* device = plan.add_device();
    device->set_id(static_cast<int32_t>(i));
    device->set_node(device_nodes[i]);
    device->set_name("sim:" + std::to_string(i));
    device->set_kind(proto::DEVICE_KIND_SIM);
  }
  for (proto::ActorDef& actor : *plan.mutable_actor()) {
    auto found = where.find(actor.name());
    const Where placement = found == where.end() ? Where{} : found->second;
    actor.set_device(placement.device);
    actor.set_queue(placement.queue);
    actor.set_estimated_seconds(placement.seconds);
    actor.set_stage(placement.stage);
  }
  std::vector<int64_t> used(device_nodes.size(), 0);
  for (proto::RegisterDef& register_def : *plan.mutable_register_def()) {
    const int32_t device = plan.actor(static_cast<int>(register_def.producer())).device();
    register_def.set_device(device);
    register_def.set_offset(used[static_cast<size_t>(device)]);
    used[static_cast<size_t>(device)] += register_def.bytes_per_slot() * register_def.slots();
  }
  for (size_t i = 0; i < device_nodes.size(); ++i) {
    plan.mutable_device(static_cast<int>(i))->set_planned_bytes(used[i]);
    plan.mutable_device(static_cast<int>(i))->set_register_bytes(used[i]);
  }
  return plan;
}

SimulationOptions NoLatency() {
  SimulationOptions options;
  options.latency.message_ns = 0;
  options.latency.inter_node_ns = 0;
  return options;
}

// source -> stage0 -> ... -> stage(p-1) -> sink; stage k on device k (queue 0, `seconds` per
// piece), the source and the sink on device p, taking no time. `slots` between stages.
proto::Plan ForwardPipeline(int stages, int64_t steps, int64_t pieces, int slots, double seconds) {
  PlanBuilder builder(steps, pieces);
  builder.AddRegister("x", 2);
  for (int k = 0; k < stages; ++k) builder.AddRegister("h" + std::to_string(k), slots);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  std::map<std::string, Where> where;
  std::string input = "x";
  for (int k = 0; k < stages; ++k) {
    const std::string name = "stage" + std::to_string(k);
    const std::string output = "h" + std::to_string(k);
    builder.AddActor({name, proto::ACTOR_KIND_COMPUTE, {input}, {output}});
    where[name] = Where{k, 0, seconds, k};
    input = output;
  }
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {input}, {}});
  where["source"] = Where{stages, 0, 0, 0};
  where["sink"] = Where{stages, 0, 0, stages - 1};
  return Place(builder.Build(), std::vector<std::string>(static_cast<size_t>(stages) + 1, "node0"),
               where);
}

SimulationResult MustSimulate(const proto::Plan& plan, const SimulationOptions& options) {
  StatusOr<SimulationResult> result = Simulate(plan, options);
  CHECK(result.ok()) << result.status();
  return *result;
}

TEST(SimulatorTest, AForwardPipelineTakesMPlusPMinusOneStageTimesWithTheFormulaBubble) {
  const int p = 4;
  const int64_t m = 8;
  const SimulationResult result =
      MustSimulate(ForwardPipeline(p, /*steps=*/1, m, /*slots=*/2, 1e-3), NoLatency());
  const SimTime t = 1000 * kMicrosecond;
  EXPECT_EQ(result.total_ns, (m + p - 1) * t);
  ASSERT_EQ(result.step_end_ns.size(), 1u);
  EXPECT_EQ(result.step_end_ns[0], (m + p - 1) * t);
  EXPECT_EQ(result.stages, p);
  EXPECT_DOUBLE_EQ(result.bubble_formula, (p - 1.0) / (m + p - 1.0));
  EXPECT_DOUBLE_EQ(result.bubble_measured, (p - 1.0) / (m + p - 1.0));
  // Every stage device ran m kernels of t.
  for (const QueueUsage& queue : result.queues) {
    if (queue.device == p) continue;  // The source and the sink.
    EXPECT_EQ(queue.firings, m);
    EXPECT_EQ(queue.busy_ns, m * t);
    EXPECT_DOUBLE_EQ(queue.utilization, static_cast<double>(m) / (m + p - 1));
  }
  EXPECT_EQ(result.firings, (p + 2) * m);
}

TEST(SimulatorTest, OneSlotBetweenTwoStagesHalvesTheThroughput) {
  const int64_t m = 10;
  const SimTime t = 100 * kMicrosecond;
  const SimulationResult two_slots =
      MustSimulate(ForwardPipeline(2, 1, m, /*slots=*/2, 100e-6), NoLatency());
  const SimulationResult one_slot =
      MustSimulate(ForwardPipeline(2, 1, m, /*slots=*/1, 100e-6), NoLatency());
  // Two slots: stage 0 fills the next piece while stage 1 reads the last one.
  EXPECT_EQ(two_slots.total_ns, (m + 1) * t);
  // One slot: stage 0 may write piece i+1 only once stage 1 is done reading piece i, so the
  // two stages alternate and each piece costs 2t.
  EXPECT_EQ(one_slot.total_ns, 2 * m * t);
}

// stage0 (device 0) -> copy (device 1, queue `copy_queue`) -> stage1 (device 1, queue 0).
proto::Plan CopyPipeline(int copy_queue, int64_t pieces, double seconds) {
  PlanBuilder builder(1, pieces);
  builder.AddRegister("x", 2).AddRegister("h", 2).AddRegister("h_copy", 2).AddRegister("y", 2);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"stage0", proto::ACTOR_KIND_COMPUTE, {"x"}, {"h"}});
  builder.AddActor({"copy", proto::ACTOR_KIND_COPY, {"h"}, {"h_copy"}});
  builder.AddActor({"stage1", proto::ACTOR_KIND_COMPUTE, {"h_copy"}, {"y"}});
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {"y"}, {}});
  return Place(builder.Build(), {"node0", "node0", "node0"},
               {{"source", Where{2, 0, 0, 0}},
                {"stage0", Where{0, 0, seconds, 0}},
                {"copy", Where{1, copy_queue, seconds, 1}},
                {"stage1", Where{1, 0, seconds, 1}},
                {"sink", Where{2, 0, 0, 1}}});
}

TEST(SimulatorTest, ACopyOnQueueOneOverlapsComputeOnQueueZero) {
  const int64_t m = 6;
  const SimTime t = 50 * kMicrosecond;
  const SimulationResult overlapped = MustSimulate(CopyPipeline(1, m, 50e-6), NoLatency());
  const SimulationResult serialized = MustSimulate(CopyPipeline(0, m, 50e-6), NoLatency());
  // Copy and compute on their own queues: a three-stage pipeline.
  EXPECT_EQ(overlapped.total_ns, (m + 2) * t);
  // On one queue, device 1 runs a copy and a compute kernel per piece, back to back.
  EXPECT_EQ(serialized.total_ns, t + 2 * m * t);
  // Device 1 has two queues in the first run, one in the second.
  int device1_queues = 0;
  for (const QueueUsage& queue : overlapped.queues) device1_queues += queue.device == 1;
  EXPECT_EQ(device1_queues, 2);
}

TEST(SimulatorTest, MessagesTakeTheirLatencyAndCrossNodeMessagesAddTheLinkLatency) {
  PlanBuilder builder(1, 1);
  builder.AddRegister("x", 1).AddRegister("h", 1).AddRegister("y", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"a", proto::ACTOR_KIND_COMPUTE, {"x"}, {"h"}});
  builder.AddActor({"b", proto::ACTOR_KIND_COMPUTE, {"h"}, {"y"}});
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {"y"}, {}});
  const proto::Plan plan = Place(builder.Build(), {"node0", "node1"},
                                 {{"source", Where{0, 0, 0, 0}},
                                  {"a", Where{0, 0, 10e-6, 0}},
                                  {"b", Where{1, 0, 10e-6, 1}},
                                  {"sink", Where{1, 0, 0, 1}}});
  SimulationOptions options;
  options.latency.message_ns = 1 * kMicrosecond;
  options.latency.inter_node_ns = 20 * kMicrosecond;
  const SimTime hop = 1 * kMicrosecond;
  const SimTime link = 20 * kMicrosecond;
  const SimTime t = 10 * kMicrosecond;
  // x reaches a after one hop; h reaches b after a hop and the link; b's Release of h goes
  // back over the link last: 3 hops, 2 kernels, 2 links.
  EXPECT_EQ(MustSimulate(plan, options).total_ns, 3 * hop + 2 * t + 2 * link);
  // A pair latency overrides the default link.
  options.latency.node_pairs.push_back({"node1", "node0", 5 * kMicrosecond});
  EXPECT_EQ(MustSimulate(plan, options).total_ns, 3 * hop + 2 * t + 2 * 5 * kMicrosecond);
  // With no link latency at all, the sink's Release of y (4 hops, 2 kernels) ends the run.
  options.latency.node_pairs[0].latency_ns = 0;
  EXPECT_EQ(MustSimulate(plan, options).total_ns, 4 * hop + 2 * t);
}

TEST(SimulatorTest, ATrainingLoopStepsAtPiecesTimesForwardAndAccumulatePlusUpdate) {
  PlanBuilder builder(/*steps=*/3, /*pieces_per_step=*/4);
  builder.AddRegister("x", 1).AddRegister("w", 1).AddRegister("dw", 1).AddRegister("g", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  builder.AddActor({"forward", proto::ACTOR_KIND_COMPUTE, {"x", "w"}, {"dw"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"dw"}, {"g"}});
  builder.AddActor({"update", proto::ACTOR_KIND_UPDATE, {"g", "w"}, {}, 0, {"w"}});
  const proto::Plan plan = Place(builder.Build(), {"node0", "node0"},
                                 {{"source", Where{1, 0, 0, 0}},
                                  {"weight", Where{0, 0, 0, 0}},
                                  {"forward", Where{0, 0, 3e-6, 0}},
                                  {"acc", Where{0, 0, 1e-6, 0}},
                                  {"update", Where{0, 0, 5e-6, 0}}});
  const SimulationResult result = MustSimulate(plan, NoLatency());
  // With one slot everywhere each piece is a forward then an accumulate, and the next step's
  // weight waits for the update: 4 * (3 + 1) + 5 = 21 us per step.
  const SimTime step = 21 * kMicrosecond;
  EXPECT_EQ(result.step_end_ns, (std::vector<SimTime>{step, 2 * step, 3 * step}));
  EXPECT_EQ(result.step_ns, (std::vector<SimTime>{step, step, step}));
  EXPECT_EQ(result.steady_step_ns, step);
  EXPECT_EQ(result.first_steady_step, 1);
  EXPECT_EQ(result.total_ns, 3 * step);
  EXPECT_EQ(result.firings, 3 * (4 * 3 + 2));  // Per piece: source, forward, acc.
}

TEST(SimulatorTest, TheRegisterHighWaterCountsTheSlotsAFastProducerFillsAhead) {
  PlanBuilder builder(1, 8);
  builder.AddRegister("x", 1, 0, {64}).AddRegister("h", 3, 0, {256}).AddRegister("y", 1);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"fast", proto::ACTOR_KIND_COMPUTE, {"x"}, {"h"}});
  builder.AddActor({"slow", proto::ACTOR_KIND_COMPUTE, {"h"}, {"y"}});
  builder.AddActor({"sink", proto::ACTOR_KIND_SINK, {"y"}, {}});
  const proto::Plan plan = Place(builder.Build(), {"node0", "node0", "node0"},
                                 {{"source", Where{2, 0, 0, 0}},
                                  {"fast", Where{0, 0, 1e-6, 0}},
                                  {"slow", Where{1, 0, 10e-6, 1}},
                                  {"sink", Where{2, 0, 0, 1}}});
  const SimulationResult result = MustSimulate(plan, NoLatency());
  ASSERT_EQ(result.memory.size(), 3u);
  // Device 0 holds only h: 3 slots of 1 KiB, all in use while slow lags behind.
  EXPECT_EQ(result.memory[0].planned_register_bytes, 3 * 1024);
  EXPECT_EQ(result.memory[0].register_high_water, 3 * 1024);
  // Device 1 holds y, a float, whose one slot the sink frees before the next fill.
  EXPECT_EQ(result.memory[1].register_high_water, 4);
}

TEST(SimulatorTest, TwoRunsOfOnePlanGiveIdenticalResultsAndTraces) {
  proto::Plan plan = CopyPipeline(1, 16, 7e-6);
  SimulationOptions options;  // Default latencies: many events at equal times.
  std::vector<std::vector<trace::TraceEvent>> traces;
  std::vector<SimulationResult> results;
  for (int run = 0; run < 2; ++run) {
    StatusOr<std::unique_ptr<SimulationTrace>> trace = SimulationTrace::Create(1 << 12);
    ASSERT_TRUE(trace.ok()) << trace.status();
    options.trace_writer = (*trace)->writer();
    results.push_back(MustSimulate(plan, options));
    traces.push_back((*trace)->TakeLog(plan, 0, options.trace_steps, "ok").events);
  }
  EXPECT_EQ(results[0].total_ns, results[1].total_ns);
  EXPECT_EQ(results[0].step_end_ns, results[1].step_end_ns);
  EXPECT_EQ(results[0].events, results[1].events);
  ASSERT_EQ(traces[0].size(), traces[1].size());
  ASSERT_EQ(traces[0].size(), static_cast<size_t>(results[0].firings));
  for (size_t i = 0; i < traces[0].size(); ++i) {
    const trace::TraceEvent& a = traces[0][i];
    const trace::TraceEvent& b = traces[1][i];
    EXPECT_EQ(std::make_tuple(a.actor, a.index, a.launch, a.start, a.end, a.cause, a.peer),
              std::make_tuple(b.actor, b.index, b.launch, b.start, b.end, b.cause, b.peer));
  }
}

TEST(SimulatorTest, TheTraceHasOneFiringPerKernelWithQueueWaitsAndCauses) {
  // Two producers share one queue: one of them waits for the other's kernel.
  PlanBuilder builder(1, 1);
  builder.AddRegister("a", 1).AddRegister("b", 1).AddRegister("c", 1);
  builder.AddActor({"left", proto::ACTOR_KIND_SOURCE, {}, {"a"}});
  builder.AddActor({"right", proto::ACTOR_KIND_SOURCE, {}, {"b"}});
  builder.AddActor({"join", proto::ACTOR_KIND_COMPUTE, {"a", "b"}, {"c"}});  // c: read by none.
  const proto::Plan plan = Place(builder.Build(), {"node0", "node0"},
                                 {{"left", Where{0, 0, 4e-6, 0}},
                                  {"right", Where{0, 0, 4e-6, 0}},
                                  {"join", Where{1, 0, 1e-6, 0}}});
  StatusOr<std::unique_ptr<SimulationTrace>> trace = SimulationTrace::Create(64);
  ASSERT_TRUE(trace.ok());
  SimulationOptions options = NoLatency();
  options.trace_writer = (*trace)->writer();
  const SimulationResult result = MustSimulate(plan, options);
  EXPECT_EQ(result.total_ns, 9 * kMicrosecond);
  const trace::TraceLog log = (*trace)->TakeLog(plan, 0, options.trace_steps, "ok");
  EXPECT_EQ(log.info.engine, "simulator");
  ASSERT_EQ(log.events.size(), 3u);
  // In completion order: left ran first (both launched at 0, FIFO by id), right waited 4 us.
  EXPECT_EQ(log.events[0].actor, 0);
  EXPECT_EQ(log.events[0].cause, trace::CauseKind::kStart);
  EXPECT_EQ(log.events[1].actor, 1);
  EXPECT_EQ(log.events[1].launch, 0);
  EXPECT_EQ(log.events[1].start, 4 * kMicrosecond);
  EXPECT_EQ(log.events[1].end, 8 * kMicrosecond);
  EXPECT_EQ(log.events[2].actor, 2);
  EXPECT_EQ(log.events[2].cause, trace::CauseKind::kInput);
  EXPECT_EQ(log.events[2].peer, 1);  // The last input to arrive came from right.
  EXPECT_EQ(log.events[2].start, 8 * kMicrosecond);
}

TEST(SimulatorTest, TheStepsOverrideRunsEveryActorThatManyTimesMore) {
  const proto::Plan plan = ForwardPipeline(2, /*steps=*/1, /*pieces=*/3, 2, 1e-6);
  SimulationOptions options = NoLatency();
  options.steps = 5;
  const SimulationResult result = MustSimulate(plan, options);
  EXPECT_EQ(result.steps, 5);
  EXPECT_EQ(result.step_end_ns.size(), 5u);
  EXPECT_EQ(result.firings, 4 * 5 * 3);
  // Steps pipeline into each other: 15 pieces through 2 stages.
  EXPECT_EQ(result.total_ns, 16 * kMicrosecond);
  EXPECT_EQ(result.steady_step_ns, 3 * kMicrosecond);
}

TEST(SimulatorTest, ADeadlockedPlanFailsNamingWhatItsActorsWaitFor) {
  // Two actors each waiting for the other's output: neither can ever fire.
  PlanBuilder builder(1, 1);
  builder.AddRegister("x", 1).AddRegister("y", 1);
  builder.AddActor({"ping", proto::ACTOR_KIND_COMPUTE, {"y"}, {"x"}});
  builder.AddActor({"pong", proto::ACTOR_KIND_COMPUTE, {"x"}, {"y"}});
  StatusOr<SimulationResult> result = Simulate(builder.Build(), SimulationOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(result.status().message(), HasSubstr("2 of 2 actors unfinished"));
  EXPECT_THAT(result.status().message(),
              HasSubstr("'ping' (starved, firing 0, register 'y' fill 0, on 'pong')"));
}

TEST(SimulatorTest, ANegativeEstimateIsRejectedNamingTheActor) {
  proto::Plan plan = ForwardPipeline(2, 1, 2, 2, 1e-6);
  plan.mutable_actor(1)->set_estimated_seconds(-1);
  StatusOr<SimulationResult> result = Simulate(plan, SimulationOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("actor 'stage0' (1)"));
}

TEST(SimulatorTest, TheReportShowsStepTimeUtilizationBubbleAndMemory) {
  const SimulationResult result = MustSimulate(ForwardPipeline(2, 2, 4, 2, 1e-3), NoLatency());
  const std::string report = FormatSimulationReport(result);
  EXPECT_THAT(report, HasSubstr("steady step 4.000 ms"));
  EXPECT_THAT(report, HasSubstr("node0/sim:0"));
  EXPECT_THAT(report, HasSubstr("compute"));
  EXPECT_THAT(report, HasSubstr("formula (p-1)/(m+p-1) = 20.0%"));
  EXPECT_THAT(report, HasSubstr("M events/s"));
}

}  // namespace
}  // namespace simulator
}  // namespace softwire
