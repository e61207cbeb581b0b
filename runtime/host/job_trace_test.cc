// Tracing a real run on the CAF host: what is recorded, and summaries of jobs whose answers are
// known (a pipeline of equal stages behind a step barrier; a job starved by one slow stage; a
// job blocked by one slot too few before a slow consumer). Kernels sleep a fixed time, so the
// timings hold on a loaded 2-core machine: the sleeps dwarf scheduling noise.
#include "runtime/host/job_trace.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "runtime/host/job_runner.h"
#include "runtime/host/test_plans.h"
#include "trace/chrome_trace.h"
#include "trace/chrome_trace_check.h"
#include "trace/trace_summary.h"

namespace softwire {
namespace runtime {
namespace {

using Spec = testing::TestActorSpec;
using testing::TestPlan;

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

class JobTraceTest : public ::testing::Test {
 protected:
  JobTraceTest() { testing::RegisterTestKernels(&kernels_, /*log=*/nullptr); }

  void ExpectGPipeBubbleAndUtilization(bool sim);

  RunOptions Options(int caf_threads = 0) const {
    RunOptions options;
    options.cpu_kernels = &kernels_;
    options.stall_timeout_seconds = 20;
    options.blas_threads = -1;
    options.caf.max_threads = caf_threads;
    options.trace.enabled = true;
    return options;
  }

  // Runs `plan` traced and returns the analysed trace.
  trace::TraceModel RunTraced(const proto::Plan& plan, const RunOptions& options) {
    StatusOr<RunResult> result = RunPlan(plan, options);
    CHECK(result.ok()) << result.status();
    CHECK(result->trace.has_value());
    StatusOr<trace::TraceModel> model = trace::BuildTraceModel(*result->trace);
    CHECK(model.ok()) << model.status();
    return std::move(*model);
  }

  KernelRegistry kernels_;
};

// source -> double -> sink over one device, registers of `slots` slots.
proto::Plan Chain(int64_t steps, int64_t pieces_per_step, int slots) {
  TestPlan plan(steps, pieces_per_step);
  plan.Register("x", slots).Register("y", slots);
  plan.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
  plan.Actor(Spec("double", proto::ACTOR_KIND_COMPUTE, "double", {"x"}, {"y"}));
  plan.Actor(Spec("sink", proto::ACTOR_KIND_SINK, "noop", {"y"}, {}));
  return plan.Build();
}

// A training-shaped pipeline: variable v gates stage 0 per step (its single slot comes back
// when the update, the phase-1 consumer, ran after the last stage's last piece of the step),
// so every step drains the pipeline, as GPipe's flush does. Stage k runs on device k and sleeps
// `micros`; bookkeeping actors (variable, source, accumulate, update) do nothing.
proto::Plan BarrierPipeline(int stages, int64_t pieces_per_step, int64_t steps, int64_t micros,
                            bool sim = false) {
  TestPlan builder(steps, pieces_per_step);
  if (sim) builder.DeviceKind(proto::DEVICE_KIND_SIM);
  builder.Register("v", 1).Register("x", 2).Register("g", 1);
  for (int k = 1; k <= stages; ++k) builder.Register("h" + std::to_string(k), 2);
  builder.Actor(Spec("v", proto::ACTOR_KIND_VARIABLE, "noop", {}, {"v"}));
  builder.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "noop", {}, {"x"}));
  for (int k = 0; k < stages; ++k) {
    std::vector<std::string> inputs = k == 0 ? std::vector<std::string>{"x", "v"}
                                             : std::vector<std::string>{"h" + std::to_string(k)};
    builder.Actor(Spec("stage" + std::to_string(k), proto::ACTOR_KIND_COMPUTE, "sleep", inputs,
                       {"h" + std::to_string(k + 1)})
                      .OnDevice(k)
                      .Attr("micros", micros)
                      .Takes(sim ? static_cast<double>(micros) * 1e-6 : 0));
  }
  const std::string last = "h" + std::to_string(stages);
  builder.Actor(
      Spec("accumulate", proto::ACTOR_KIND_ACCUMULATE, "noop", {last}, {"g"}).OnDevice(stages - 1));
  builder.Actor(
      Spec("update", proto::ACTOR_KIND_UPDATE, "noop", {"g", "v"}, {}).OnDevice(stages - 1));
  proto::Plan plan = builder.Build();
  for (proto::RegisterDef& reg : *plan.mutable_register_def()) {
    if (reg.name() == "g") reg.set_period(pieces_per_step);  // A per-step sum.
    if (reg.name() != "v") continue;
    for (proto::RegisterConsumer& consumer : *reg.mutable_consumer()) {
      if (plan.actor(static_cast<int>(consumer.actor())).name() == "update") consumer.set_phase(1);
    }
  }
  for (proto::ActorDef& actor : *plan.mutable_actor()) {
    if (actor.name().compare(0, 5, "stage") == 0)
      actor.set_stage(std::stoi(actor.name().substr(5)));
    if (actor.name() == "accumulate" || actor.name() == "update") actor.set_stage(stages - 1);
    if (actor.kind() == proto::ACTOR_KIND_UPDATE) {
      actor.mutable_update()->set_variable("v");
      actor.mutable_update()->mutable_optimizer()->mutable_sgd()->set_learning_rate(0.1);
    }
  }
  return plan;
}

int32_t ActorId(const trace::TraceModel& model, const std::string& name) {
  for (size_t i = 0; i < model.plan.actors.size(); ++i) {
    if (model.plan.actors[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

TEST_F(JobTraceTest, EveryFiringIsRecordedWithItsTimesAndCause) {
  proto::Plan plan = Chain(/*steps=*/4, /*pieces_per_step=*/3, /*slots=*/2);
  StatusOr<RunResult> result = RunPlan(plan, Options());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->trace.has_value());
  EXPECT_EQ(result->trace->info.events_dropped, 0);
  StatusOr<trace::TraceModel> model = trace::BuildTraceModel(*result->trace);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(static_cast<int64_t>(model->firings.size()), result->firings);
  for (const trace::FiringRecord& firing : model->firings) {
    EXPECT_LE(firing.launch, firing.start);
    EXPECT_LE(firing.start, firing.end);
    EXPECT_GE(firing.launch, 0);
    if (firing.actor == 0 && firing.firing == 0) {
      EXPECT_EQ(firing.cause.kind, trace::CauseKind::kStart);
    } else {
      EXPECT_NE(firing.cause.kind, trace::CauseKind::kNone) << firing.actor << " " << firing.firing;
      EXPECT_NE(firing.cause.kind, trace::CauseKind::kStart);
    }
    if (firing.actor == 2) {  // The sink waits for its input or its own previous firing.
      EXPECT_TRUE(firing.cause.kind == trace::CauseKind::kInput ||
                  firing.cause.kind == trace::CauseKind::kPreviousFiring);
    }
  }
  // One flow per Ready: 12 fills of x and 12 of y.
  EXPECT_EQ(model->flows.size(), 24u);
  // One device, one strand: its slices never overlap.
  EXPECT_EQ(model->adjusted_slices, 0);
  const std::string file = trace::ExportChromeTrace(*model);
  StatusOr<trace::ChromeTraceCounts> counts = trace::CheckChromeTrace(file);
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->flows, 24);
  EXPECT_EQ(file.find("\"adjusted_slices\":0") != std::string::npos, true);
}

TEST_F(JobTraceTest, AnUntracedRunHasNoTrace) {
  RunOptions options = Options();
  options.trace.enabled = false;
  StatusOr<RunResult> result = RunPlan(Chain(2, 2, 2), options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->trace.has_value());
}

// A 4-stage pipeline of equal stages behind the training loop's variable/update barrier,
// m = 4: the trace's bubble and utilization match the GPipe closed form within 2%. Stages of
// 10 ms on cpu devices (sleeping kernels); 25 ms on sim devices, whose spinning worker and timer
// need both cores, so that a neighbour's millisecond costs less of the 2%.
void JobTraceTest::ExpectGPipeBubbleAndUtilization(bool sim) {
  constexpr int kStages = 4;
  constexpr int64_t kPieces = 4;
  const double formula = (kStages - 1.0) / (kPieces + kStages - 1.0);  // 3/7
  // Noise moves the bubble both ways: a thread woken late between stages adds idle time, and a
  // sleeping kernel woken late on a busy machine stretches its stage, adding busy time to it
  // (stages 1-3 at 63-65% against 57%, bubble 0.40 against 0.43, once the copies ran on a strand
  // of their own beside the kernels). One run in five on a quiet enough machine matches the
  // formula closely; the retry keeps the test meaningful on a loaded 2-core CI.
  std::string last;
  bool matched = false;
  for (int attempt = 0; attempt < 5 && !matched; ++attempt) {
    trace::TraceModel model = RunTraced(
        BarrierPipeline(kStages, kPieces, /*steps=*/4, /*micros=*/sim ? 25000 : 10000, sim),
        // cpu: a worker per stage, so sleeping kernels overlap. sim: the default,
        // one worker (spinning across launches; RUNTIME.md "Devices"): more
        // workers take the sim timer's core and stretch launches.
        Options(/*caf_threads=*/sim ? 0 : kStages + 2));
    trace::TraceSummary summary = trace::Summarize(model);
    last = trace::FormatSummary(model, summary);
    EXPECT_EQ(summary.stages, kStages);
    EXPECT_NEAR(summary.bubble_formula, formula, 1e-12);
    EXPECT_TRUE(trace::CheckChromeTrace(trace::ExportChromeTrace(model)).ok());
    // The variable's slot gated every step: stage 0 was starved on it between steps. A kernel
    // stretched by a busy machine turns starved time into busy time: retried like the bubble.
    const trace::ActorUsage& stage0 = summary.actors[static_cast<size_t>(ActorId(model, "stage0"))];
    matched = stage0.starved > 0.25 && std::abs(summary.bubble_measured - formula) <= 0.02;
    for (int device = 0; device < kStages; ++device) {
      // A kernel stretched by a busy machine raises its device's share: retried like the bubble.
      const double utilization = summary.devices[static_cast<size_t>(device)].steady_utilization;
      matched = matched && std::abs(utilization - (1 - formula)) <= 0.02;
    }
    if (kSanitized && !matched) {
      GTEST_SKIP() << "under a sanitizer every message is many times slower: the closed form "
                      "is checked in plain builds only. Last run:\n"
                   << last;
    }
  }
  EXPECT_TRUE(matched) << "bubble and utilization stayed more than 2% off (p-1)/(m+p-1) = "
                       << formula << ", or stage 0 starved no more than 25% of the time, in 5 "
                       << "runs; the last:\n"
                       << last;
}

TEST_F(JobTraceTest, APipelineOfEqualStagesHasTheGPipeBubbleAndUtilization) {
  ExpectGPipeBubbleAndUtilization(/*sim=*/false);
}

TEST_F(JobTraceTest, APipelineOfEqualStagesOnSimDevicesHasTheGPipeBubbleAndUtilization) {
  ExpectGPipeBubbleAndUtilization(/*sim=*/true);
}

TEST_F(JobTraceTest, AJobStarvedByOneSlowStageNamesItTheBottleneck) {
  TestPlan builder(/*steps=*/12, /*pieces_per_step=*/1);
  builder.Register("x", 2).Register("y", 2);
  builder.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "noop", {}, {"x"}));
  builder.Actor(Spec("slow", proto::ACTOR_KIND_COMPUTE, "sleep", {"x"}, {"y"})
                    .OnDevice(1)
                    .Attr("micros", 10000));
  builder.Actor(
      Spec("fast", proto::ACTOR_KIND_SINK, "sleep", {"y"}, {}).OnDevice(2).Attr("micros", 1000));
  const proto::Plan plan = builder.Build();
  // The shares are timing: a sleep that overshoots on a busy machine (a 1 ms kernel taking 3)
  // turns the fast actor's starved time into busy time. Like the bubble above, they are
  // retried (the last run reported); the bottleneck's identity is asserted in every run.
  std::string text;
  bool shares = false;
  for (int attempt = 0; attempt < 3 && !shares; ++attempt) {
    trace::TraceModel model = RunTraced(plan, Options(/*caf_threads=*/4));
    trace::TraceSummary summary = trace::Summarize(model);
    text = trace::FormatSummary(model, summary);
    EXPECT_EQ(summary.bottleneck, ActorId(model, "slow")) << text;
    EXPECT_NE(text.find("bottleneck: actor 'slow'"), std::string::npos) << text;
    const trace::ActorUsage& fast = summary.actors[static_cast<size_t>(ActorId(model, "fast"))];
    const trace::ActorUsage& slow = summary.actors[static_cast<size_t>(ActorId(model, "slow"))];
    // The steady steps' critical path (steps 1-11) is the slow stage's firings back to back.
    shares = fast.starved > 0.7 && slow.busy > 0.85 && slow.blocked < 0.05 &&
             summary.bottleneck_seconds >= 0.9 * 11 * 0.010;
  }
  EXPECT_TRUE(shares) << "in 3 runs the fast actor was never starved > 70% with the slow one "
                         "busy > 85%, blocked < 5% and its firings >= 99 ms of the critical "
                         "path; the last:\n"
                      << text;
}

TEST_F(JobTraceTest, AJobBlockedByOneSlotTooFewNamesTheSlowConsumer) {
  TestPlan builder(/*steps=*/10, /*pieces_per_step=*/1);
  builder.Register("x", 2).Register("r", 1);
  builder.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "noop", {}, {"x"}));
  builder.Actor(Spec("producer", proto::ACTOR_KIND_COMPUTE, "sleep", {"x"}, {"r"})
                    .OnDevice(1)
                    .Attr("micros", 2000));
  builder.Actor(Spec("consumer", proto::ACTOR_KIND_SINK, "sleep", {"r"}, {})
                    .OnDevice(2)
                    .Attr("micros", 10000));
  trace::TraceModel model = RunTraced(builder.Build(), Options(/*caf_threads=*/4));
  trace::TraceSummary summary = trace::Summarize(model);
  const std::string text = trace::FormatSummary(model, summary);
  EXPECT_EQ(summary.bottleneck, ActorId(model, "consumer")) << text;
  const int32_t producer = ActorId(model, "producer");
  EXPECT_GT(summary.actors[static_cast<size_t>(producer)].blocked, 0.6) << text;
  // Its blocked intervals name the register and the consumer that holds the slot.
  bool named = false;
  for (const trace::WaitRecord& wait : model.waits) {
    if (wait.actor != producer || wait.kind != trace::WaitKind::kBlocked) continue;
    EXPECT_EQ(model.plan.registers[static_cast<size_t>(wait.register_id)].name, "r");
    EXPECT_EQ(wait.waiting_on, std::vector<int32_t>{ActorId(model, "consumer")});
    named = true;
  }
  EXPECT_TRUE(named);
  // One slot of r held most of the time: the high-water of device 1 is one slot.
  EXPECT_EQ(summary.memory[1].register_high_water, model.plan.registers[1].bytes_per_slot);
}

TEST_F(JobTraceTest, TheStepWindowRecordsOnlyItsSteps) {
  RunOptions options = Options();
  options.trace.steps = trace::StepWindow{2, 4};
  StatusOr<RunResult> result = RunPlan(Chain(/*steps=*/6, /*pieces_per_step=*/2, 2), options);
  ASSERT_TRUE(result.ok()) << result.status();
  StatusOr<trace::TraceModel> model = trace::BuildTraceModel(*result->trace);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->firings.size(), 3u * 2 * 2);  // 3 actors, 2 steps, 2 pieces.
  for (const trace::FiringRecord& firing : model->firings) {
    EXPECT_GE(model->StepOf(firing), 2);
    EXPECT_LT(model->StepOf(firing), 4);
  }
  EXPECT_EQ(model->info.window.ToString(), "2:4");
  EXPECT_TRUE(trace::CheckChromeTrace(trace::ExportChromeTrace(*model)).ok());
}

TEST_F(JobTraceTest, TheEventCapDropsTheRestAndTheFileSaysHowMany) {
  RunOptions options = Options();
  options.trace.event_cap = 40;
  StatusOr<RunResult> result = RunPlan(Chain(/*steps=*/50, /*pieces_per_step=*/1, 2), options);
  ASSERT_TRUE(result.ok()) << result.status();
  const trace::TraceLog& log = *result->trace;
  EXPECT_LE(log.info.events_recorded, 40);
  EXPECT_GT(log.info.events_dropped, 0);
  EXPECT_EQ(log.info.event_cap, 40);
  StatusOr<trace::TraceModel> model = trace::BuildTraceModel(log);
  ASSERT_TRUE(model.ok());
  const std::string file = trace::ExportChromeTrace(*model);
  EXPECT_TRUE(trace::CheckChromeTrace(file).ok()) << trace::CheckChromeTrace(file).status();
  EXPECT_NE(file.find("\"events_dropped\":" + std::to_string(log.info.events_dropped)),
            std::string::npos);
  EXPECT_NE(trace::FormatSummary(*model, trace::Summarize(*model)).find("events were dropped"),
            std::string::npos);
}

TEST_F(JobTraceTest, AStalledRunStillHandsOverItsTrace) {
  // a and b each wait for the other's first fill: nobody can fire but the source, once.
  TestPlan builder(/*steps=*/3, /*pieces_per_step=*/1);
  builder.Register("x", 1).Register("a_out", 1).Register("b_out", 1);
  builder.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
  builder.Actor(Spec("a", proto::ACTOR_KIND_COMPUTE, "double", {"x", "b_out"}, {"a_out"}));
  builder.Actor(Spec("b", proto::ACTOR_KIND_COMPUTE, "double", {"a_out"}, {"b_out"}));
  proto::Plan plan = builder.Build();
  RunOptions options = Options();
  options.stall_timeout_seconds = 0.2;
  StatusOr<std::unique_ptr<LoadedPlan>> loaded = LoadedPlan::Load(plan, options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  StatusOr<RunResult> result = (*loaded)->Run();
  ASSERT_FALSE(result.ok());
  std::optional<trace::TraceLog> log = (*loaded)->TakeTrace();
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->info.outcome.rfind("DEADLINE_EXCEEDED: job stalled", 0), 0u) << log->info.outcome;
  StatusOr<trace::TraceModel> model = trace::BuildTraceModel(*log);
  ASSERT_TRUE(model.ok());
  ASSERT_EQ(model->firings.size(), 1u);  // The source's first firing.
  EXPECT_FALSE((*loaded)->TakeTrace().has_value()) << "taken once";
}

TEST_F(JobTraceTest, AFiringThatFailsLeavesNoRecord) {
  // The middle actor fails at its firing 3: its firings 0-2 are kept, whole; firing 3 is not.
  TestPlan builder(/*steps=*/6, /*pieces_per_step=*/1);
  builder.Register("x", 1).Register("y", 1);
  builder.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
  builder.Actor(
      Spec("fails", proto::ACTOR_KIND_COMPUTE, "fail_at", {"x"}, {"y"}).Attr("firing", 3));
  builder.Actor(Spec("sink", proto::ACTOR_KIND_SINK, "noop", {"y"}, {}));
  StatusOr<std::unique_ptr<LoadedPlan>> loaded = LoadedPlan::Load(builder.Build(), Options());
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  StatusOr<RunResult> result = (*loaded)->Run();
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("injected failure at firing 3"), std::string::npos)
      << result.status();
  std::optional<trace::TraceLog> log = (*loaded)->TakeTrace();
  ASSERT_TRUE(log.has_value());
  StatusOr<trace::TraceModel> model = trace::BuildTraceModel(*log);
  ASSERT_TRUE(model.ok()) << model.status();
  const int32_t fails = ActorId(*model, "fails");
  std::vector<int64_t> kept;
  for (const trace::FiringRecord& firing : model->firings) {
    EXPECT_LE(firing.launch, firing.start);
    EXPECT_LE(firing.start, firing.end);
    if (firing.actor == fails) kept.push_back(firing.firing);
  }
  EXPECT_EQ(kept, (std::vector<int64_t>{0, 1, 2}));
}

TEST_F(JobTraceTest, LiveDiagnosisNamesWhatEachActorWaitsForWithoutStoppingTheJob) {
  TestPlan builder(/*steps=*/400, /*pieces_per_step=*/1);
  builder.Register("x", 1).Register("y", 1);
  builder.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "noop", {}, {"x"}));
  builder.Actor(Spec("slow", proto::ACTOR_KIND_COMPUTE, "sleep", {"x"}, {"y"})
                    .OnDevice(1)
                    .Attr("micros", 5000));
  builder.Actor(Spec("sink", proto::ACTOR_KIND_SINK, "noop", {"y"}, {}));
  proto::Plan plan = builder.Build();
  RunOptions options = Options(/*caf_threads=*/3);
  options.trace.enabled = false;
  StatusOr<std::unique_ptr<LoadedPlan>> loaded = LoadedPlan::Load(plan, options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  StatusOr<JobWaitStates> early = (*loaded)->DescribeWaits(std::chrono::milliseconds(100));
  EXPECT_EQ(early.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(early.status().message().find("is not running yet"), std::string::npos)
      << early.status();
  StatusOr<RunResult> result = InternalError("not run");
  std::thread runner([&] { result = (*loaded)->Run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  // Asked again while the job is still starting (a loaded machine can take longer than 150 ms).
  StatusOr<JobWaitStates> waits = (*loaded)->DescribeWaits(std::chrono::seconds(2));
  for (int attempt = 0; attempt < 100 && !waits.ok(); ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    waits = (*loaded)->DescribeWaits(std::chrono::seconds(2));
  }
  ASSERT_TRUE(waits.ok()) << waits.status();
  const std::string text = waits->Text(40);
  EXPECT_EQ(waits->actors, 3);
  EXPECT_EQ(waits->unfinished, 3) << text;
  EXPECT_GT(waits->completed_firings, 0);
  EXPECT_NE(text.find("wait states of job 'runtime_test' after "), std::string::npos) << text;
  // The source waits for its one slot, which the slow stage holds; the sink starves on it.
  EXPECT_NE(text.find("actor 'source' (source) on node0/cpu:0 at firing "), std::string::npos)
      << text;
  EXPECT_NE(text.find(": blocked: no free slot in register 'x'; fill "), std::string::npos) << text;
  EXPECT_NE(text.find("is still held by actor 'slow'"), std::string::npos) << text;
  EXPECT_NE(text.find("actor 'sink' (sink) on node0/cpu:0 at firing "), std::string::npos) << text;
  EXPECT_NE(text.find("of register 'y' from actor 'slow'"), std::string::npos) << text;
  for (const ActorWaitState& wait : waits->waits) {
    if (wait.actor_name == "sink" && wait.answered) {
      EXPECT_EQ(wait.state, static_cast<int32_t>(actors::WaitState::Kind::kStarved));
      EXPECT_EQ(wait.register_name, "y");
      EXPECT_EQ(wait.waiting_on_names, std::vector<std::string>{"slow"});
      EXPECT_EQ(wait.node, "node0");
    }
  }
  // The job went on; cancel it rather than wait 2 s for its end.
  const int64_t before = waits->completed_firings;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  StatusOr<JobWaitStates> later = (*loaded)->DescribeWaits(std::chrono::seconds(2));
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_GT(later->completed_firings, before);
  (*loaded)->Cancel("enough");
  runner.join();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kCancelled);
  EXPECT_NE(result.status().message().find("enough"), std::string::npos);
  StatusOr<JobWaitStates> after = (*loaded)->DescribeWaits(std::chrono::milliseconds(100));
  EXPECT_EQ(after.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(after.status().message().find("is not running any more"), std::string::npos)
      << after.status();
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
