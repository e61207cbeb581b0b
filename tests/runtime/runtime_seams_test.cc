// The runtime's seams, proven on compiled training plans:
//   - one plan hosted as two HostedPlans (node0 and node1 of a 2x2cpu cluster, each on a
//     NodeRuntime of its own) that meet only through their PeerRouters trains to the per-step
//     losses of the whole plan in one HostedPlan;
//   - one NodeRuntime runs two jobs at once on disjoint devices, each to its own losses, refuses
//     a third on a device in use, and drops messages of an ended job;
//   - a hosted plan run twice starts its second run from the first run's trained variables: the
//     two runs of N steps give the losses of one run of 2N steps;
//   - a run that fails leaves its hosted plan unusable, and the runtime's devices free for the
//     next job once it is gone.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/job_events.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/test_plans.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "tests/runtime/testing/hosted_runs.h"

namespace softwire {
namespace runtime {
namespace {

constexpr int kSteps = 4;

using seams_testing::Bounded;
using seams_testing::CompileMlp;
using seams_testing::LossRecorder;
using seams_testing::RunOnce;
using seams_testing::RuntimeFor;

void ExpectSameLosses(const std::vector<double>& actual, const std::vector<double>& expected,
                      double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t step = 0; step < actual.size(); ++step) {
    EXPECT_TRUE(std::isfinite(actual[step])) << "step " << step;
    EXPECT_LE(std::abs(actual[step] - expected[step]), tolerance * std::abs(expected[step]))
        << "step " << step << ": " << actual[step] << " vs " << expected[step];
  }
}

class RuntimeSeamsTest : public ::testing::Test {
 protected:
  void SetUp() override { RegisterCpuKernels(&kernels_); }
  KernelRegistry kernels_;
};

TEST_F(RuntimeSeamsTest, TwoNodesConnectedOnlyByPeerRoutersTrainAsTheWholePlan) {
  const proto::Plan plan = CompileMlp("2x2cpu", /*dp=*/2, /*pp=*/2, kSteps);
  ASSERT_EQ(plan.device_size(), 4);

  std::unique_ptr<NodeRuntime> whole_runtime = RuntimeFor(plan, "", &kernels_);
  ASSERT_NE(whole_runtime, nullptr);
  StatusOr<std::unique_ptr<HostedPlan>> whole = whole_runtime->Host(plan);
  ASSERT_TRUE(whole.ok()) << whole.status();
  const std::vector<double> expected = RunOnce(whole_runtime.get(), whole->get());
  ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));
  EXPECT_LT(expected.back(), expected.front());  // It trains.
  whole->reset();
  whole_runtime.reset();

  // Two runtimes, as two processes would have; one job id, as a coordinator would give.
  seams_testing::TwoNodeShares shares;
  constexpr actors::JobId kJob = 7;
  Status hosted = seams_testing::HostOnTwoNodes(plan, &kernels_, kJob, &shares);
  ASSERT_TRUE(hosted.ok()) << hosted;
  EXPECT_FALSE(shares.node0->actors().empty());
  EXPECT_FALSE(shares.node1->actors().empty());

  LossRecorder losses0(plan);
  LossRecorder losses1(plan);
  Status created =
      seams_testing::CreateConnectedRuns(Bounded(nullptr), &losses0, &losses1, &shares);
  ASSERT_TRUE(created.ok()) << created;

  Status status1;
  std::thread node1_thread([&] { status1 = shares.run1->Run(); });
  Status status0 = shares.run0->Run();
  node1_thread.join();
  ASSERT_TRUE(status0.ok()) << status0;
  ASSERT_TRUE(status1.ok()) << status1;
  // The loss is collected on the node that hosts its sinks.
  const std::vector<double>& actual =
      losses0.losses.size() >= losses1.losses.size() ? losses0.losses : losses1.losses;
  ExpectSameLosses(actual, expected, 1e-6);
  EXPECT_EQ(shares.run0->router().dropped(), 0);
  EXPECT_EQ(shares.run1->router().dropped(), 0);
}

TEST_F(RuntimeSeamsTest, OneRuntimeRunsTwoJobsAtOnceOnDisjointDevices) {
  proto::Plan first = CompileMlp("1cpu", 1, 1, kSteps);
  proto::Plan second = CompileMlp("1cpu", 1, 1, kSteps + 2);
  ASSERT_EQ(first.device_size(), 1);
  ASSERT_EQ(second.device_size(), 1);
  second.mutable_device(0)->set_name("cpu:1");  // The second job gets the second device.

  // What each job computes alone.
  std::vector<double> first_alone;
  std::vector<double> second_alone;
  {
    std::unique_ptr<NodeRuntime> alone = RuntimeFor(first, "", &kernels_);
    first_alone = RunOnce(alone.get(), alone->Host(first)->get());
  }
  {
    std::unique_ptr<NodeRuntime> alone = RuntimeFor(second, "", &kernels_);
    second_alone = RunOnce(alone.get(), alone->Host(second)->get());
  }

  NodeRuntimeOptions options;
  options.kernels.cpu = &kernels_;
  for (const proto::Plan* plan : {&first, &second}) {
    DeviceSpec spec;
    spec.device = plan->device(0);
    options.devices.push_back(spec);
  }
  StatusOr<std::unique_ptr<NodeRuntime>> runtime = NodeRuntime::Create(std::move(options));
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  StatusOr<std::unique_ptr<HostedPlan>> job1 = (*runtime)->Host(first);
  StatusOr<std::unique_ptr<HostedPlan>> job2 = (*runtime)->Host(second);
  ASSERT_TRUE(job1.ok()) << job1.status();
  ASSERT_TRUE(job2.ok()) << job2.status();
  EXPECT_NE((*job1)->job(), (*job2)->job());
  // A third job cannot take a device in use.
  StatusOr<std::unique_ptr<HostedPlan>> third = (*runtime)->Host(first);
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), StatusCode::kFailedPrecondition) << third.status();

  LossRecorder losses1(first);
  LossRecorder losses2(second);
  StatusOr<std::unique_ptr<Execution>> run1 =
      Execution::Create(runtime->get(), job1->get(), Bounded(&losses1));
  StatusOr<std::unique_ptr<Execution>> run2 =
      Execution::Create(runtime->get(), job2->get(), Bounded(&losses2));
  ASSERT_TRUE(run1.ok()) << run1.status();
  ASSERT_TRUE(run2.ok()) << run2.status();
  Status status2;
  std::thread second_thread([&] { status2 = (*run2)->Run(); });
  Status status1 = (*run1)->Run();
  second_thread.join();
  ASSERT_TRUE(status1.ok()) << status1;
  ASSERT_TRUE(status2.ok()) << status2;
  ExpectSameLosses(losses1.losses, first_alone, 1e-6);
  ExpectSameLosses(losses2.losses, second_alone, 1e-6);

  // A late message of job 1, or one of job 2 sent to job 1's router, reaches no actor.
  actors::ProtocolMessage late;
  late.job = (*job1)->job();
  late.to = 0;
  late.Set(actors::Release{0, 0, 0});
  (*run1)->router().Send(late);
  late.job = (*job2)->job();
  (*run1)->router().Send(late);
  EXPECT_EQ((*run1)->router().dropped(), 2);
}

TEST_F(RuntimeSeamsTest, ASecondRunStartsFromTheFirstRunsTrainedVariables) {
  const proto::Plan plan = CompileMlp("1cpu", 1, 1, kSteps);
  const proto::Plan twice_as_long = CompileMlp("1cpu", 1, 1, 2 * kSteps);

  std::unique_ptr<NodeRuntime> runtime = RuntimeFor(plan, "", &kernels_);
  ASSERT_NE(runtime, nullptr);
  std::vector<double> all_steps;
  {
    StatusOr<std::unique_ptr<HostedPlan>> long_run = runtime->Host(twice_as_long);
    ASSERT_TRUE(long_run.ok()) << long_run.status();
    all_steps = RunOnce(runtime.get(), long_run->get());
  }
  ASSERT_EQ(all_steps.size(), static_cast<size_t>(2 * kSteps));

  StatusOr<std::unique_ptr<HostedPlan>> hosted = runtime->Host(plan);
  ASSERT_TRUE(hosted.ok()) << hosted.status();
  const std::vector<double> first = RunOnce(runtime.get(), hosted->get());
  const std::vector<double> second = RunOnce(runtime.get(), hosted->get());
  EXPECT_EQ((*hosted)->runs(), 2);
  ExpectSameLosses(first, std::vector<double>(all_steps.begin(), all_steps.begin() + kSteps), 1e-6);
  // Not a fresh start (which would repeat `first` exactly): the second run goes on where the
  // first ended, with the trained variables, the optimizer's state and the next batches.
  ExpectSameLosses(second, std::vector<double>(all_steps.begin() + kSteps, all_steps.end()), 1e-6);
  ASSERT_EQ(second.size(), first.size());
  EXPECT_NE(second, first);
}

TEST_F(RuntimeSeamsTest, AFailedRunBreaksItsHostedPlanAndFreesTheDevicesForTheNextJob) {
  testing::KernelLog log;
  KernelRegistry test_kernels;
  testing::RegisterTestKernels(&test_kernels, &log);
  auto build = [](int64_t fail_at) {
    testing::TestPlan builder(/*steps=*/20, /*pieces_per_step=*/1);
    builder.Register("x", 2).Register("y", 2);
    builder.Actor(
        testing::TestActorSpec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
    builder.Actor(testing::TestActorSpec("work", proto::ACTOR_KIND_COMPUTE,
                                         fail_at >= 0 ? "fail_at" : "double", {"x"}, {"y"})
                      .Attr("firing", fail_at));
    builder.Actor(testing::TestActorSpec("sink", proto::ACTOR_KIND_SINK, "report", {"y"}, {}));
    builder.Output("sink", true);
    return builder.Build();
  };
  const proto::Plan failing = build(/*fail_at=*/3);
  const proto::Plan working = build(/*fail_at=*/-1);
  std::unique_ptr<NodeRuntime> runtime = RuntimeFor(failing, "", &test_kernels);
  ASSERT_NE(runtime, nullptr);
  {
    StatusOr<std::unique_ptr<HostedPlan>> hosted = runtime->Host(failing);
    ASSERT_TRUE(hosted.ok()) << hosted.status();
    StatusOr<std::unique_ptr<Execution>> run =
        Execution::Create(runtime.get(), hosted->get(), Bounded(nullptr));
    ASSERT_TRUE(run.ok()) << run.status();
    Status status = (*run)->Run();
    EXPECT_NE(status.message().find("actor 'work'"), std::string::npos) << status;
    EXPECT_TRUE((*hosted)->broken());
    StatusOr<std::unique_ptr<Execution>> again =
        Execution::Create(runtime.get(), hosted->get(), Bounded(nullptr));
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition) << again.status();
  }
  StatusOr<std::unique_ptr<HostedPlan>> next = runtime->Host(working);
  ASSERT_TRUE(next.ok()) << next.status();
  LossRecorder losses(working);
  StatusOr<std::unique_ptr<Execution>> run =
      Execution::Create(runtime.get(), next->get(), Bounded(&losses));
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE((*run)->Run().ok());
  EXPECT_EQ(losses.losses.size(), 20u);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
