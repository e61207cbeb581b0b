// Several firings in flight (docs/PROTOCOL.md) change no result on the CAF runtime: the MLP and
// the transformer compiled with --max-in-flight 3 (every compute and copy actor) train to the
// very losses of the same jobs one firing at a time, on one cpu device and pipelined over two;
// and a plan on sim devices whose kernels have a launch latency runs to its end with the same
// firings, with and without stream-ordered edges (docs/PROTOCOL.md; the CAF host's path that
// cuda streams take, run here on sim queues that say they run in launch order). Bit-equal
// losses are expected: each actor's kernels run in launch order on its queue with the same
// inputs, and k in flight changes only when firings are launched.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "runtime/host/job_runner.h"

namespace softwire {
namespace {

constexpr int kSteps = 6;

// `job` compiled with `max_in_flight` for `cluster` ("" for one cpu device) and `pp` stages.
proto::Plan Compile(const std::string& job, const std::string& cluster, int pp, int max_in_flight) {
  StatusOr<compiler::JobFile> file =
      compiler::ParseJobFile("tests/compiler/jobs/" + job + ".pbtxt");
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return proto::Plan();
  compiler::CompileOptions options;
  options.steps = kSteps;
  options.max_in_flight = max_in_flight;
  if (!cluster.empty()) {
    StatusOr<proto::Cluster> spec = placement::LoadClusterSpec(cluster);
    EXPECT_TRUE(spec.ok()) << spec.status();
    options.cluster = *spec;
    options.parallel.set_pipeline_stages(pp);
  }
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
  EXPECT_TRUE(plan.ok()) << job << ": " << plan.status();
  return plan.ok() ? *plan : proto::Plan();
}

runtime::RunOptions BoundedRun() {
  runtime::RunOptions options;
  options.stall_timeout_seconds = 20;  // A stalled plan fails with a report instead of hanging.
  return options;
}

std::vector<double> Losses(const proto::Plan& plan) {
  std::vector<double> losses;
  StatusOr<runtime::RunResult> run = runtime::RunPlan(plan, BoundedRun());
  EXPECT_TRUE(run.ok()) << run.status();
  if (run.ok()) {
    for (const runtime::StepResult& step : run->steps) losses.push_back(step.loss);
  }
  return losses;
}

int CountInFlight(const proto::Plan& plan, int k) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) count += actor.max_in_flight() == k;
  return count;
}

struct Case {
  const char* job;
  const char* cluster;
  int pp;
};

class InFlightOnCpu : public ::testing::TestWithParam<Case> {};

TEST_P(InFlightOnCpu, TrainsToTheLossesOfOneFiringAtATime) {
  const Case& c = GetParam();
  const proto::Plan one = Compile(c.job, c.cluster, c.pp, 1);
  const proto::Plan three = Compile(c.job, c.cluster, c.pp, 3);
  EXPECT_EQ(CountInFlight(one, 3), 0);
  EXPECT_GT(CountInFlight(three, 3), 0);  // The flag reached the compute and copy actors.
  for (const proto::ActorDef& actor : three.actor()) {
    if (actor.kind() != proto::ACTOR_KIND_COMPUTE && actor.kind() != proto::ACTOR_KIND_COPY) {
      EXPECT_LE(actor.max_in_flight(), 1) << actor.name();
    }
  }
  const std::vector<double> expected = Losses(one);
  const std::vector<double> actual = Losses(three);
  ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));
  // The losses move from step to step, or equality would prove little.
  EXPECT_NE(expected.back(), expected.front());
  ASSERT_EQ(actual.size(), expected.size());
  for (int step = 0; step < kSteps; ++step) {
    EXPECT_EQ(actual[step], expected[step]) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(Jobs, InFlightOnCpu,
                         ::testing::Values(Case{"mlp", "", 1}, Case{"mlp", "2cpu", 2},
                                           Case{"transformer", "", 1}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.job) +
                                  (info.param.pp > 1 ? "_pp" + std::to_string(info.param.pp) : "");
                         });

TEST(InFlightOnSim, APipelineOnSimDevicesWithLaunchLatencyRunsToItsEnd) {
  const proto::Plan one = Compile("mlp", "2sim", 2, 1);
  const proto::Plan three = Compile("mlp", "2sim", 2, 3);
  EXPECT_GT(CountInFlight(three, 3), 0);
  runtime::RunOptions options = BoundedRun();
  options.sim.launch_latency = std::chrono::microseconds(50);
  StatusOr<runtime::RunResult> run_one = runtime::RunPlan(one, options);
  StatusOr<runtime::RunResult> run_three = runtime::RunPlan(three, options);
  ASSERT_TRUE(run_one.ok()) << run_one.status();
  ASSERT_TRUE(run_three.ok()) << run_three.status();
  EXPECT_EQ(run_three->firings, run_one->firings);
  EXPECT_EQ(run_three->steps.size(), run_one->steps.size());
}

// Readies and Releases at launch between actors of one queue, through the CAF host: a launch is
// enqueued before the messages it came with, a checkpoint-free run marks every same-queue edge.
// The pipelined MLP (copies between the stages on queues of their own) and the transformer on
// one device, at 1 and 3 in flight: every run ends, with the firings of the unmarked run.
TEST(InFlightOnSim, StreamOrderedEdgesRunToTheEndWithTheSameFirings) {
  for (const Case& c : {Case{"mlp", "2sim", 2}, Case{"transformer", "1sim", 1}}) {
    for (int in_flight : {1, 3}) {
      const proto::Plan plan = Compile(c.job, c.cluster, c.pp, in_flight);
      runtime::RunOptions options = BoundedRun();
      options.sim.launch_latency = std::chrono::microseconds(50);
      StatusOr<runtime::RunResult> unmarked = runtime::RunPlan(plan, options);
      options.sim.runs_in_launch_order = true;
      StatusOr<runtime::RunResult> marked = runtime::RunPlan(plan, options);
      ASSERT_TRUE(unmarked.ok()) << c.job << ": " << unmarked.status();
      ASSERT_TRUE(marked.ok()) << c.job << " at " << in_flight << ": " << marked.status();
      EXPECT_EQ(marked->firings, unmarked->firings) << c.job << " at " << in_flight;
      EXPECT_EQ(marked->steps.size(), static_cast<size_t>(kSteps)) << c.job;
    }
  }
}

}  // namespace
}  // namespace softwire
