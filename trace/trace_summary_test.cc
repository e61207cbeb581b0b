// Summaries of synthetic traces whose utilization, bubble, critical path and memory are known
// in closed form.
#include "trace/trace_summary.h"

#include <gtest/gtest.h>

#include "trace/testing/synthetic_traces.h"

namespace softwire {
namespace trace {
namespace {

using testing::BarrierPipeline;

TraceModel Model(const TraceLog& log) {
  StatusOr<TraceModel> model = BuildTraceModel(log);
  CHECK(model.ok()) << model.status();
  return std::move(*model);
}

TEST(TraceSummaryTest, AnEvenPipelineWithABarrierHasTheGPipeBubbleExactly) {
  for (int p : {2, 4}) {
    for (int64_t m : {1, 4, 8}) {
      TraceModel model = Model(
          BarrierPipeline(p, m, /*steps=*/3, std::vector<TimeNs>(static_cast<size_t>(p), 1000)));
      TraceSummary summary = Summarize(model);
      const double formula = (p - 1.0) / (m + p - 1.0);
      EXPECT_EQ(summary.stages, p);
      EXPECT_NEAR(summary.bubble_formula, formula, 1e-12);
      EXPECT_NEAR(summary.bubble_measured, formula, 1e-9) << "p=" << p << " m=" << m;
      // Equal stages: all of it is filling and draining, none imbalance.
      EXPECT_NEAR(summary.bubble_fill_drain, formula, 1e-9);
      EXPECT_NEAR(summary.bubble_imbalance, 0, 1e-12);
      EXPECT_EQ(summary.first_steady_step, 1);
      EXPECT_EQ(summary.end_step, 3);
      for (const DeviceUsage& device : summary.devices) {
        EXPECT_NEAR(device.utilization, 1 - formula, 1e-9) << "device " << device.device;
        EXPECT_NEAR(device.steady_utilization, 1 - formula, 1e-9);
      }
    }
  }
}

TEST(TraceSummaryTest, UnequalStagesSplitTheIdleTimeIntoFillingAndDrainingAndImbalance) {
  // Stage 1 takes 3x stage 0: a step spans 1000 + 4 x 3000 = 13000 ns; stage 0 is busy 4000,
  // stage 1 12000. The busiest stage idles 1000 (filling); stage 0 idles 9000, of which 8000
  // beyond the busiest: imbalance. The formula (equal stages) says 20%.
  TraceModel model = Model(BarrierPipeline(2, 4, /*steps=*/3, {1000, 3000}));
  TraceSummary summary = Summarize(model);
  EXPECT_NEAR(summary.bubble_measured, 10.0 / 26.0, 1e-9);
  EXPECT_NEAR(summary.bubble_fill_drain, 2.0 / 26.0, 1e-9);
  EXPECT_NEAR(summary.bubble_imbalance, 8.0 / 26.0, 1e-9);
  EXPECT_NEAR(summary.bubble_formula, 0.2, 1e-12);
  // Step 0 is the warm-up, measured apart: the same shape here.
  EXPECT_NEAR(summary.warmup_idle, 10.0 / 26.0, 1e-9);
  EXPECT_NEAR(summary.warmup_fill_drain + summary.warmup_imbalance, summary.warmup_idle, 1e-12);
  const std::string text = FormatSummary(model, summary);
  for (const char* part : {"the devices idled 38.5% of the steady steps 1..2: 7.7% the pipeline "
                           "filling and draining",
                           "30.8% imbalance", "warm-up step 0 apart: idle 38.5%"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
}

TEST(TraceSummaryTest, AWindowOfALongerRunLeavesItsLastStepOutOfTheSteadySteps) {
  // Steps 0..3 recorded of a longer run (`--trace-steps 0:4`): step 4's firings, not recorded,
  // would overlap step 3's tail and read as idle, so the steady steps are 1..2. The whole run
  // recorded: 1..3.
  TraceLog whole = BarrierPipeline(2, 4, /*steps=*/4, {1000, 1000});
  TraceSummary all = Summarize(Model(whole));
  EXPECT_EQ(all.first_steady_step, 1);
  EXPECT_EQ(all.end_steady_step, 4);
  TraceLog window = whole;
  window.info.window.first = 0;
  window.info.window.end = 4;
  TraceSummary windowed = Summarize(Model(window));
  EXPECT_EQ(windowed.first_steady_step, 1);
  EXPECT_EQ(windowed.end_steady_step, 3);
  EXPECT_EQ(windowed.end_step, 4);
  const double formula = 1.0 / 5.0;
  EXPECT_NEAR(windowed.bubble_measured, formula, 1e-9);
  EXPECT_NE(FormatSummary(Model(window), windowed).find("steady steps 1..2"), std::string::npos)
      << FormatSummary(Model(window), windowed);
}

TEST(TraceSummaryTest, ActorSharesAddUpAndNameWhatEachWaitedFor) {
  // p = 3, m = 2, t = 1 us: the last stage is starved until its input arrives.
  TraceModel model = Model(BarrierPipeline(3, 2, 2, {1000, 1000, 1000}));
  TraceSummary summary = Summarize(model);
  ASSERT_EQ(summary.actors.size(), 3u);
  for (const ActorUsage& actor : summary.actors) {
    EXPECT_NEAR(actor.busy, 4.0 / 8.0, 1e-9) << actor.actor;  // 4 firings of 1 us in 8 us.
    EXPECT_LE(actor.busy + actor.starved + actor.blocked + actor.queued, 1 + 1e-9);
  }
  EXPECT_GT(summary.actors[2].starved, 0.3);
  EXPECT_EQ(summary.actors[0].starved, 0);
}

TEST(TraceSummaryTest, TheCriticalPathRunsThroughTheSlowStageAndNamesItTheBottleneck) {
  TraceModel model = Model(BarrierPipeline(4, 6, 1, {1000, 1000, 3000, 1000}));
  TraceSummary summary = Summarize(model);
  EXPECT_EQ(summary.bottleneck, 2);
  EXPECT_NEAR(summary.bottleneck_seconds, 6 * 3000e-9, 1e-12);
  ASSERT_FALSE(summary.critical_path.empty());
  // From the very first firing to the very last, with no gap: the path explains the span.
  EXPECT_NEAR(summary.path_seconds, summary.span_seconds, 1e-12);
  EXPECT_NEAR(summary.path_busy_seconds, summary.path_seconds, 1e-12);
  const FiringRecord& first = model.firings[summary.critical_path.front()];
  EXPECT_EQ(first.actor, 0);
  EXPECT_EQ(first.firing, 0);
  const FiringRecord& last = model.firings[summary.critical_path.back()];
  EXPECT_EQ(last.actor, 3);
  EXPECT_EQ(last.firing, 5);
  // stage0 x1, stage1 x1, stage2 x6, stage3 x1.
  ASSERT_EQ(summary.path_segments.size(), 4u);
  EXPECT_EQ(summary.path_segments[2].actor, 2);
  EXPECT_EQ(summary.path_segments[2].firings, 6);
  ASSERT_EQ(summary.path_actors.size(), 4u);
  EXPECT_EQ(summary.path_actors.front().actor, 2) << "most kernel time on the path first";
  EXPECT_EQ(summary.path_actors.front().firings, 6);
  for (size_t i = 1; i < summary.path_actors.size(); ++i) {
    EXPECT_GE(summary.path_actors[i - 1].busy_seconds, summary.path_actors[i].busy_seconds);
  }
  const std::string text = FormatSummary(model, summary);
  EXPECT_NE(text.find("bottleneck: actor 'stage2'"), std::string::npos) << text;
}

TEST(TraceSummaryTest, AFiringThatWaitedForItsQueueFollowsTheFiringThatHeldIt) {
  // Two sources on one device queue: b could launch at 2 but the queue ran a until 10.
  TraceLog log;
  log.plan.job_name = "shared_queue";
  log.plan.steps = 1;
  log.plan.devices.push_back(
      DeviceFacts{"node0/cpu:0", "node0", "cpu", 256, 256, 0, 0, "sw:cpu0/k*"});
  for (const char* name : {"a", "b"}) {
    ActorFacts actor;
    actor.name = name;
    actor.kind = "source";
    actor.firings = 1;
    actor.outputs = {static_cast<int32_t>(log.plan.registers.size())};
    RegisterFacts reg;
    reg.name = std::string(name) + "_out";
    reg.producer = static_cast<int32_t>(log.plan.actors.size());
    reg.bytes_per_slot = 128;
    log.plan.actors.push_back(actor);
    log.plan.registers.push_back(reg);
  }
  log.events = {FiringEvent(0, 0, 0, 0, 10000, CauseKind::kStart, -1, -1, -1),
                FiringEvent(1, 0, 2000, 10000, 15000, CauseKind::kStart, -1, -1, -1)};
  TraceModel model = Model(log);
  TraceSummary summary = Summarize(model);
  ASSERT_EQ(summary.critical_path.size(), 2u);
  EXPECT_EQ(model.firings[summary.critical_path[0]].actor, 0);
  EXPECT_EQ(model.firings[summary.critical_path[1]].actor, 1);
  EXPECT_EQ(summary.bottleneck, 0);
  // b's wait between its launch and its start is "queued"; both slots were taken at launch.
  bool queued = false;
  for (const WaitRecord& wait : model.waits) {
    if (wait.actor == 1 && wait.kind == WaitKind::kQueued && wait.start == 0 && wait.end == 10000) {
      queued = true;
    }
  }
  EXPECT_TRUE(queued);
  EXPECT_EQ(summary.memory[0].register_high_water, 256);
  EXPECT_NEAR(summary.devices[0].utilization, 1.0, 1e-12);
}

TEST(TraceSummaryTest, StepsStartWithTheComputeActorsThatReadAVariable) {
  // source -> prep (compute on the source's data only: it runs ahead) -> fc (reads w too).
  PlanFacts plan;
  auto actor = [&](const char* name, const char* kind) {
    ActorFacts facts;
    facts.name = name;
    facts.kind = kind;
    plan.actors.push_back(facts);
    return static_cast<int32_t>(plan.actors.size()) - 1;
  };
  auto reg = [&](int32_t producer, int32_t consumer) {
    RegisterFacts facts;
    facts.producer = producer;
    facts.consumers = {consumer};
    plan.registers.push_back(facts);
    plan.actors[static_cast<size_t>(consumer)].inputs.push_back(
        static_cast<int32_t>(plan.registers.size()) - 1);
  };
  const int32_t source = actor("source", "source");
  const int32_t prep = actor("prep", "compute");
  const int32_t w = actor("w", "variable");
  const int32_t fc = actor("fc", "compute");
  reg(source, prep);
  reg(prep, fc);
  reg(w, fc);
  EXPECT_EQ(StepStartingActors(plan), (std::vector<bool>{false, false, false, true}));
  // Without variables, every compute actor; without compute actors, every actor.
  plan.actors[static_cast<size_t>(w)].kind = "source";
  EXPECT_EQ(StepStartingActors(plan), (std::vector<bool>{false, true, false, true}));
  for (ActorFacts& facts : plan.actors) facts.kind = "copy";
  EXPECT_EQ(StepStartingActors(plan), (std::vector<bool>(4, true)));
  (void)fc;
}

TEST(TraceSummaryTest, TheSummaryNamesTheCriticalPathsActorsWithTheirShareAndItsWaits) {
  TraceModel model = Model(BarrierPipeline(3, 4, 1, {1000, 3000, 1000}));
  TraceSummary summary = Summarize(model);
  ASSERT_FALSE(summary.path_actors.empty());
  double shares = 0;
  for (const PathActor& on_path : summary.path_actors) shares += on_path.share;
  EXPECT_NEAR(shares + summary.path_wait_seconds / summary.path_seconds, 1.0, 1e-9)
      << "kernels and waits make up the path";
  EXPECT_EQ(summary.path_actors.front().actor, 1);
  EXPECT_NEAR(summary.path_actors.front().share, 12000.0 / 14000, 1e-9);
  const std::string text = FormatSummary(model, summary);
  EXPECT_NE(text.find("critical path: the steady step 0's, 6 firings over 14.0 us (100% of the "
                      "steady time); share of the path:"),
            std::string::npos)
      << text;
  const size_t path_at = text.find("share of the path:");
  const size_t line_at = text.find("  stage1 ", path_at);
  ASSERT_NE(line_at, std::string::npos) << text;
  const std::string line = text.substr(line_at, text.find('\n', line_at) - line_at);
  for (const char* part : {"85.7%", " 4 firings", "12.0 us"}) {
    EXPECT_NE(line.find(part), std::string::npos) << part << " in: " << line;
  }
  EXPECT_NE(text.find("(waits)"), std::string::npos) << text;
}

TEST(TraceSummaryTest, MemoryHighWaterCountsOccupiedSlotsTimesTheirBytes) {
  TraceModel model = Model(BarrierPipeline(3, 4, 2, {1000, 1000, 1000}));
  TraceSummary summary = Summarize(model);
  ASSERT_EQ(summary.memory.size(), 3u);
  // h0 and h1 have 2 slots of 64 bytes; both are full at once in a steady pipeline.
  EXPECT_EQ(summary.memory[0].register_high_water, 128);
  EXPECT_EQ(summary.memory[1].register_high_water, 128);
  EXPECT_EQ(summary.memory[2].register_high_water, 0);
  EXPECT_EQ(summary.memory[0].planned_bytes, 4096);
}

TEST(TraceSummaryTest, TheTextHasEverySection) {
  TraceModel model = Model(BarrierPipeline(2, 4, 3, {2000, 2000}));
  const std::string text = FormatSummary(model, Summarize(model));
  for (const char* part :
       {"trace of job 'synthetic_pipeline'", "devices: utilization", "node0/sim:0",
        "actors: share of the span",
        "critical path:", "bottleneck:", "pipeline bubble: the devices idled 20.0%",
        "(p-1)/(m+p-1) = 20.0% with p = 2 stages, m = 4 pieces", "memory high-water"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
}

TEST(TraceSummaryTest, AnEmptyTraceSummarizesWithoutFiringsOrBottleneck) {
  TraceLog log = BarrierPipeline(2, 1, 1, {10, 10});
  log.events.clear();
  TraceModel model = Model(log);
  TraceSummary summary = Summarize(model);
  EXPECT_EQ(summary.firings, 0);
  EXPECT_EQ(summary.bottleneck, -1);
  EXPECT_LT(summary.bubble_measured, 0);
  EXPECT_NE(FormatSummary(model, summary).find("not measured"), std::string::npos);
}

}  // namespace
}  // namespace trace
}  // namespace softwire
