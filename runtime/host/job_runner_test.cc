// RunPlan on hand-built plans with the test kernels of test_plans.h.
#include "runtime/host/job_runner.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "runtime/host/test_plans.h"

namespace softwire {
namespace runtime {
namespace {

using Spec = testing::TestActorSpec;
using testing::KernelLog;
using testing::TestPlan;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// source (piece number) -> double -> report, every register with `slots` slots.
TestPlan DoublingChain(int64_t steps, int64_t pieces_per_step, int slots) {
  TestPlan plan(steps, pieces_per_step);
  plan.Register("x", slots).Register("y", slots);
  plan.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
  plan.Actor(Spec("double", proto::ACTOR_KIND_COMPUTE, "double", {"x"}, {"y"}));
  plan.Actor(Spec("sink", proto::ACTOR_KIND_SINK, "report", {"y"}, {}).Reports("loss"));
  plan.Output("sink", /*is_loss=*/true);
  return plan;
}

class JobRunnerTest : public ::testing::Test {
 protected:
  JobRunnerTest() { RegisterTestKernels(&kernels_, &log_); }

  RunOptions Options() const {
    RunOptions options;
    options.cpu_kernels = &kernels_;
    options.stall_timeout_seconds = 5;
    options.blas_threads = -1;
    return options;
  }

  KernelRegistry kernels_;
  KernelLog log_;
};

TEST_F(JobRunnerTest, ValuesArriveInOrderAndStepsAverageTheirPieces) {
  proto::Plan plan = DoublingChain(/*steps=*/5, /*pieces_per_step=*/3, /*slots=*/2).Build();
  std::vector<int64_t> progress_steps;
  RunOptions options = Options();
  options.progress = [&](const StepResult& step) { progress_steps.push_back(step.step); };
  StatusOr<RunResult> result = RunPlan(plan, options);
  ASSERT_TRUE(result.ok()) << result.status();

  ASSERT_EQ(result->steps.size(), 5u);
  EXPECT_EQ(progress_steps, std::vector<int64_t>({0, 1, 2, 3, 4}));
  for (int64_t step = 0; step < 5; ++step) {
    // Pieces 3s, 3s+1, 3s+2 doubled: mean 2 * (3s + 1).
    EXPECT_DOUBLE_EQ(result->steps[step].loss, 2.0 * (3 * step + 1));
    EXPECT_DOUBLE_EQ(result->steps[step].outputs.at("loss"), result->steps[step].loss);
    EXPECT_GE(result->steps[step].seconds, 0.0);
  }
  std::vector<KernelLog::Run> sink_runs = log_.Runs("sink");
  ASSERT_EQ(sink_runs.size(), 15u);
  for (size_t i = 0; i < sink_runs.size(); ++i) EXPECT_EQ(sink_runs[i].first_piece, int64_t(i));
  EXPECT_EQ(result->firings, 45);
}

TEST_F(JobRunnerTest, TwoSlotsLetProducerAndConsumerOverlapAndOneSlotDoesNot) {
  auto overlaps = [&](int slots) {
    TestPlan builder(/*steps=*/6, /*pieces_per_step=*/1);
    builder.Register("x", slots).Register("y", slots);
    builder.Actor(Spec("producer", proto::ACTOR_KIND_SOURCE, "sleep", {}, {"x"})
                      .OnDevice(0)
                      .Attr("micros", 15000));
    builder.Actor(Spec("consumer", proto::ACTOR_KIND_COMPUTE, "sleep", {"x"}, {"y"})
                      .OnDevice(1)
                      .Attr("micros", 15000));
    builder.Actor(Spec("sink", proto::ACTOR_KIND_SINK, "report", {"y"}, {}).OnDevice(1));
    builder.Output("sink", true);
    proto::Plan plan = builder.Build();
    log_.Clear();
    RunOptions options = Options();
    options.caf.max_threads = 2;  // One worker per device even on a 1-core machine.
    StatusOr<RunResult> result = RunPlan(plan, options);
    EXPECT_TRUE(result.ok()) << result.status();
    int overlapping = 0;
    for (const KernelLog::Run& produce : log_.Runs("producer")) {
      for (const KernelLog::Run& consume : log_.Runs("consumer")) {
        if (produce.start < consume.end && consume.start < produce.end) ++overlapping;
      }
    }
    return overlapping;
  };
  EXPECT_GE(overlaps(2), 3) << "with two slots the producer fills piece p+1 while the consumer "
                               "reads piece p";
  EXPECT_EQ(overlaps(1), 0) << "with one slot the producer waits for the consumer's release";
}

TEST_F(JobRunnerTest, AKernelErrorFailsTheJobNamingTheActorQuickly) {
  TestPlan builder(/*steps=*/2000, /*pieces_per_step=*/1);
  builder.Register("x", 2).Register("y", 2);
  builder.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
  builder.Actor(
      Spec("flaky", proto::ACTOR_KIND_COMPUTE, "fail_at", {"x"}, {"y"}).Attr("firing", 3));
  builder.Actor(Spec("sink", proto::ACTOR_KIND_SINK, "report", {"y"}, {}));
  builder.Output("sink", true);
  Clock::time_point start = Clock::now();
  StatusOr<RunResult> result = RunPlan(builder.Build(), Options());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("actor 'flaky'"), std::string::npos) << result.status();
  EXPECT_NE(result.status().message().find("injected failure at firing 3"), std::string::npos)
      << result.status();
  EXPECT_LT(SecondsSince(start), 3.0);
  EXPECT_LT(log_.Runs("flaky").size(), 10u) << "the job stops soon after the failure";
}

TEST_F(JobRunnerTest, AStalledPlanIsReportedWithWhatEachActorWaitsFor) {
  // a and b each wait for the other's first fill: a cycle without initial credit.
  TestPlan builder(/*steps=*/3, /*pieces_per_step=*/1);
  builder.Register("x", 1).Register("a_out", 1).Register("b_out", 1);
  builder.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
  builder.Actor(Spec("a", proto::ACTOR_KIND_COMPUTE, "double", {"x", "b_out"}, {"a_out"}));
  builder.Actor(Spec("b", proto::ACTOR_KIND_COMPUTE, "double", {"a_out"}, {"b_out"}));
  RunOptions options = Options();
  options.stall_timeout_seconds = 0.3;
  Clock::time_point start = Clock::now();
  StatusOr<RunResult> result = RunPlan(builder.Build(), options);
  ASSERT_FALSE(result.ok());
  const std::string& report = result.status().message();
  EXPECT_EQ(result.status().code(), StatusCode::kDeadlineExceeded) << report;
  EXPECT_NE(report.find("job stalled"), std::string::npos) << report;
  EXPECT_NE(report.find("actor 'a' (compute) on node0/cpu:0 at firing 0 (piece 0): starved: "
                        "needs fill 0 (piece 0) of register 'b_out' from actor 'b'"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("actor 'b' (compute) on node0/cpu:0 at firing 0 (piece 0): starved: "
                        "needs fill 0 (piece 0) of register 'a_out' from actor 'a'"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("actor 'source' (source) on node0/cpu:0 at firing 1 (piece 1): blocked: "
                        "no free slot in register 'x'; fill 0 (piece 0) is still held by "
                        "actor 'a'"),
            std::string::npos)
      << report;
  EXPECT_LT(SecondsSince(start), 3.0);
}

TEST_F(JobRunnerTest, AKernelSlowerThanTheStallTimeoutIsNotAStall) {
  TestPlan builder(/*steps=*/2, /*pieces_per_step=*/1);
  builder.Register("x", 1).Register("y", 1);
  builder.Actor(
      Spec("source", proto::ACTOR_KIND_SOURCE, "sleep", {}, {"x"}).Attr("micros", 250000));
  builder.Actor(Spec("double", proto::ACTOR_KIND_COMPUTE, "double", {"x"}, {"y"}));
  builder.Actor(Spec("sink", proto::ACTOR_KIND_SINK, "report", {"y"}, {}));
  builder.Output("sink", true);
  RunOptions options = Options();
  options.stall_timeout_seconds = 0.05;
  StatusOr<RunResult> result = RunPlan(builder.Build(), options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->steps.size(), 2u);
}

TEST_F(JobRunnerTest, EachDeviceGetsExactlyItsPlannedBytes) {
  TestPlan builder = DoublingChain(/*steps=*/2, /*pieces_per_step=*/1, /*slots=*/3);
  builder.ExtraBytes(13);  // An arena size that is no multiple of any alignment.
  proto::Plan plan = builder.Build();
  StatusOr<RunResult> result = RunPlan(plan, Options());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->memory.size(), 1u);
  EXPECT_EQ(result->memory[0].device, "node0/cpu:0");
  EXPECT_EQ(result->memory[0].planned_bytes, plan.device(0).planned_bytes());
  EXPECT_EQ(result->memory[0].allocated_bytes, plan.device(0).planned_bytes());
  EXPECT_EQ(result->memory[0].allocated_bytes % 64, 13);
}

int CountThreads() {
  int threads = 0;
  DIR* directory = opendir("/proc/self/task");
  if (directory == nullptr) return -1;
  while (dirent* entry = readdir(directory)) {
    if (entry->d_name[0] != '.') ++threads;
  }
  closedir(directory);
  return threads;
}

// The thread count once it has come down to `expected`, or after 2 s. CAF lets a few of its
// own threads finish after the actor system is gone; a leak never comes down.
int CountThreadsSettlingTo(int expected) {
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(2);
  int threads = CountThreads();
  while (threads > expected && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    threads = CountThreads();
  }
  return threads;
}

TEST_F(JobRunnerTest, ManyJobsInARowLeaveNoThreadsBehind) {
  TestPlan builder = DoublingChain(/*steps=*/4, /*pieces_per_step=*/2, /*slots=*/2);
  builder.Cores(2);  // Kernel thread pools too.
  proto::Plan plan = builder.Build();
  ASSERT_TRUE(RunPlan(plan, Options()).ok());  // Warm-up: libraries' own lazy threads.
  int before = CountThreads();
  ASSERT_GT(before, 0);
  Clock::time_point start = Clock::now();
  for (int run = 0; run < 25; ++run) {
    StatusOr<RunResult> result = RunPlan(plan, Options());
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_EQ(result->steps.size(), 4u);
  }
  EXPECT_EQ(CountThreadsSettlingTo(before), before);
  EXPECT_LT(SecondsSince(start), 20.0);
}

TEST_F(JobRunnerTest, FailedJobsLeaveNoThreadsBehindEither) {
  TestPlan builder(/*steps=*/50, /*pieces_per_step=*/1);
  builder.Register("x", 2).Register("y", 2);
  builder.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
  builder.Actor(
      Spec("flaky", proto::ACTOR_KIND_COMPUTE, "fail_at", {"x"}, {"y"}).Attr("firing", 1));
  builder.Actor(Spec("sink", proto::ACTOR_KIND_SINK, "report", {"y"}, {}));
  builder.Output("sink", true);
  builder.Cores(2);
  proto::Plan plan = builder.Build();
  ASSERT_FALSE(RunPlan(plan, Options()).ok());
  int before = CountThreads();
  for (int run = 0; run < 10; ++run) ASSERT_FALSE(RunPlan(plan, Options()).ok());
  EXPECT_EQ(CountThreadsSettlingTo(before), before);
}

TEST_F(JobRunnerTest, FewerStepsThanPlannedRunOnlyThoseSteps) {
  proto::Plan plan = DoublingChain(/*steps=*/5, /*pieces_per_step=*/2, /*slots=*/2).Build();
  RunOptions options = Options();
  options.steps = 2;
  StatusOr<RunResult> result = RunPlan(plan, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->steps.size(), 2u);
  EXPECT_EQ(log_.Runs("sink").size(), 4u);
  options.steps = 6;
  StatusOr<RunResult> too_many = RunPlan(plan, options);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(JobRunnerTest, VariablePartsAreStitchedIntoTheLogicalValue) {
  TestPlan builder(/*steps=*/2, /*pieces_per_step=*/2);
  builder.Register("w_top", 1, {2, 3}).Register("w_bottom", 1, {2, 3});
  builder.Actor(Spec("w_top_holder", proto::ACTOR_KIND_VARIABLE, "part_fill", {}, {"w_top"})
                    .Attr("first", 0));
  builder.Actor(Spec("w_bottom_holder", proto::ACTOR_KIND_VARIABLE, "part_fill", {}, {"w_bottom"})
                    .Attr("first", 6));
  builder.Variable("w", {4, 3}, {{"w_top", 0, 0, 2}, {"w_bottom", 0, 2, 4}});
  StatusOr<RunResult> result = RunPlan(builder.Build(), Options());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->variables.count("w"), 1u);
  const NpyArray& w = result->variables.at("w");
  EXPECT_EQ(w.shape, Shape({4, 3}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(w.As<float>()[i], static_cast<float>(i)) << i;
}

TEST_F(JobRunnerTest, AnUnknownOpTypeFailsAtLoadNamingTheActor) {
  TestPlan builder(/*steps=*/1, /*pieces_per_step=*/1);
  builder.Register("x", 1);
  builder.Actor(Spec("source", proto::ACTOR_KIND_SOURCE, "no_such_kernel", {}, {"x"}));
  StatusOr<RunResult> result = RunPlan(builder.Build(), Options());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("no_such_kernel"), std::string::npos) << result.status();
  EXPECT_NE(result.status().message().find("source"), std::string::npos) << result.status();
}

TEST_F(JobRunnerTest, AnUnknownSchedulerPolicyIsABadArgument) {
  RunOptions options = Options();
  options.caf.policy = "round-robin";
  StatusOr<RunResult> result = RunPlan(DoublingChain(1, 1, 1).Build(), options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(JobRunnerTest, WorkStealingAndSeveralWorkersGiveTheSameValues) {
  proto::Plan plan = DoublingChain(/*steps=*/20, /*pieces_per_step=*/4, /*slots=*/3).Build();
  RunOptions options = Options();
  options.caf.policy = "stealing";
  options.caf.max_threads = 2;
  StatusOr<RunResult> result = RunPlan(plan, options);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->steps.size(), 20u);
  for (int64_t step = 0; step < 20; ++step) {
    EXPECT_DOUBLE_EQ(result->steps[step].loss, 2.0 * (4 * step + 1.5));
  }
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
