// Sends that do not hold their device (docs/DATA_PLANE.md, "Collectives across nodes"): an MLP
// pipelined over two nodes (2x1cpu: one cpu device, one strand, per node; stage 0 sends piece
// j's activations while it could run piece j+1), hosted as two shares in one process, with
// node0's sends written through a transport that holds the first fill:
//   - while that fill is held, other firings of node0 complete (the strand is free; a send that
//     held it until its bytes were out would let none run, and the hold would time out), and
//     the run still gives the per-step losses of the whole plan in one share;
//   - a run cancelled while that fill is held ends within seconds, only after the fill's
//     completion was reported (nothing of the run touches the share afterwards), and the
//     runtime hosts the plan again.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/job_events.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/wire_transport.h"
#include "runtime/kernels/cpu/cpu_kernels.h"

namespace softwire {
namespace runtime {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kSteps = 3;

proto::Plan CompilePipelined() {
  StatusOr<compiler::JobFile> file = compiler::ParseJobFile("tests/compiler/jobs/mlp.pbtxt");
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return proto::Plan();
  compiler::CompileOptions options;
  options.steps = kSteps;
  StatusOr<proto::Cluster> cluster = placement::ParseClusterShorthand("2x1cpu", 4);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  options.cluster = *cluster;
  options.parallel.set_pipeline_stages(2);
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : proto::Plan();
}

class LossRecorder final : public JobEvents {
 public:
  explicit LossRecorder(const proto::Plan& plan) {
    for (const proto::PlanOutput& output : plan.output()) {
      if (output.is_loss()) loss_ = output.name();
    }
  }
  void OnStep(const CollectedStep& step) override {
    auto found = step.outputs.find(loss_);
    if (found != step.outputs.end()) losses.push_back(found->second);
  }
  std::vector<double> losses;

 private:
  std::string loss_;
};

std::unique_ptr<NodeRuntime> RuntimeFor(const proto::Plan& plan, const std::string& node,
                                        const KernelRegistry* kernels) {
  NodeRuntimeOptions options;
  options.kernels.cpu = kernels;
  for (const proto::PlanDevice& device : plan.device()) {
    if (!node.empty() && device.node() != node) continue;
    DeviceSpec spec;
    spec.device = device;
    options.devices.push_back(spec);
  }
  StatusOr<std::unique_ptr<NodeRuntime>> runtime = NodeRuntime::Create(std::move(options));
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  return runtime.ok() ? std::move(runtime).value() : nullptr;
}

// Holds the first fill written through it on a thread of its own (as a data plane's writer
// holds a fill while its bytes travel), then lands it through `inner`; every later fill goes
// straight to `inner`. The hold ends once `progress` (read at the hand-off and while holding)
// has grown by `needed`, when the fill's job is stopping (then the fill completes Cancelled, as
// an unwritten queued fill does), or after 10 s. needed 0: only stopping ends it early.
class HoldingTransport final : public WireTransport {
 public:
  HoldingTransport(WireTransport* inner, std::function<int64_t()> progress, int64_t needed)
      : inner_(inner), progress_(std::move(progress)), needed_(needed) {}
  ~HoldingTransport() override {
    if (holder_.joinable()) holder_.join();
  }

  void Write(const WireWrite& write, std::function<void(Status)> done) override {
    if (held_.exchange(true)) {
      inner_->Write(write, std::move(done));
      return;
    }
    const int64_t at_hand_off = progress_();  // On the send's thread, before it returns.
    holder_ = std::thread([this, write, done = std::move(done), at_hand_off]() mutable {
      holding.store(true);
      const Clock::time_point deadline = Clock::now() + 10s;
      auto progressed = [&] { return needed_ > 0 && progress_() >= at_hand_off + needed_; };
      while (!progressed() && Clock::now() < deadline) {
        if (write.stopping != nullptr && write.stopping->load()) {
          completed.store(true);
          done(CancelledError("the job is stopping"));
          return;
        }
        std::this_thread::sleep_for(1ms);
      }
      released_by_progress.store(progressed());
      completed.store(true);
      inner_->Write(write, std::move(done));
    });
  }

  std::atomic<bool> holding{false};               // The first fill is held.
  std::atomic<bool> released_by_progress{false};  // Its hold ended because progress grew.
  std::atomic<bool> completed{false};             // Its `done` is called (set just before).

 private:
  WireTransport* const inner_;
  const std::function<int64_t()> progress_;
  const int64_t needed_;
  std::atomic<bool> held_{false};
  std::thread holder_;
};

class SendOverlapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterCpuKernels(&kernels_);
    plan_ = CompilePipelined();
    int sends = 0;
    for (const proto::ActorDef& actor : plan_.actor()) {
      if (actor.kind() == proto::ACTOR_KIND_SEND) ++sends;
    }
    ASSERT_GT(sends, 0) << "the pipelined plan across nodes has no sends";
    runtime0_ = RuntimeFor(plan_, "node0", &kernels_);
    runtime1_ = RuntimeFor(plan_, "node1", &kernels_);
    ASSERT_NE(runtime0_, nullptr);
    ASSERT_NE(runtime1_, nullptr);
    StatusOr<std::unique_ptr<HostedPlan>> node0 =
        HostedPlan::Load(runtime0_.get(), plan_, "node0", kJob);
    StatusOr<std::unique_ptr<HostedPlan>> node1 =
        HostedPlan::Load(runtime1_.get(), plan_, "node1", kJob);
    ASSERT_TRUE(node0.ok()) << node0.status();
    ASSERT_TRUE(node1.ok()) << node1.status();
    node0_ = std::move(node0).value();
    node1_ = std::move(node1).value();
    ASSERT_TRUE(node0_->Bind({node1_.get()}).ok());
    ASSERT_TRUE(node1_->Bind({node0_.get()}).ok());
    in_process_ = std::make_unique<InProcessWireTransport>(&node0_->register_slots());
  }

  // Creates both runs and connects them.
  void CreateRuns(JobEvents* events0, JobEvents* events1) {
    ExecutionOptions options;
    options.stall_timeout = 20s;
    options.events = events0;
    StatusOr<std::unique_ptr<Execution>> run0 =
        Execution::Create(runtime0_.get(), node0_.get(), options);
    options.events = events1;
    StatusOr<std::unique_ptr<Execution>> run1 =
        Execution::Create(runtime1_.get(), node1_.get(), options);
    ASSERT_TRUE(run0.ok()) << run0.status();
    ASSERT_TRUE(run1.ok()) << run1.status();
    run0_ = std::move(run0).value();
    run1_ = std::move(run1).value();
    run0_->router().ConnectPeer(*node0_->ActorsOf("node1"), &run1_->router());
    run1_->router().ConnectPeer(*node1_->ActorsOf("node0"), &run0_->router());
  }

  static constexpr actors::JobId kJob = 11;
  KernelRegistry kernels_;
  proto::Plan plan_;
  std::unique_ptr<NodeRuntime> runtime0_;
  std::unique_ptr<NodeRuntime> runtime1_;
  std::unique_ptr<HostedPlan> node0_;
  std::unique_ptr<HostedPlan> node1_;
  std::unique_ptr<InProcessWireTransport> in_process_;
  std::unique_ptr<Execution> run0_;
  std::unique_ptr<Execution> run1_;
};

TEST_F(SendOverlapTest, OtherFiringsOfTheDeviceCompleteWhileASendIsInFlight) {
  // The losses of the whole plan in one share, for comparison.
  std::vector<double> expected;
  {
    std::unique_ptr<NodeRuntime> whole_runtime = RuntimeFor(plan_, "", &kernels_);
    ASSERT_NE(whole_runtime, nullptr);
    StatusOr<std::unique_ptr<HostedPlan>> whole = whole_runtime->Host(plan_);
    ASSERT_TRUE(whole.ok()) << whole.status();
    LossRecorder losses(plan_);
    ExecutionOptions options;
    options.events = &losses;
    options.stall_timeout = 20s;
    StatusOr<std::unique_ptr<Execution>> run =
        Execution::Create(whole_runtime.get(), whole->get(), options);
    ASSERT_TRUE(run.ok()) << run.status();
    ASSERT_TRUE((*run)->Run().ok());
    expected = losses.losses;
  }
  ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));

  LossRecorder losses0(plan_);
  LossRecorder losses1(plan_);
  CreateRuns(&losses0, &losses1);
  ASSERT_NE(run0_, nullptr);
  // Released once node0 completed two more firings than when the fill was handed over: firings
  // that ran on node0's one strand while the send was in flight.
  HoldingTransport holding(
      in_process_.get(), [&] { return run0_->completed_firings(); }, 2);
  node0_->SetWireTransport(&holding);
  Status status1;
  std::thread node1_thread([&] { status1 = run1_->Run(); });
  Status status0 = run0_->Run();
  node1_thread.join();
  node0_->SetWireTransport(nullptr);
  ASSERT_TRUE(status0.ok()) << status0;
  ASSERT_TRUE(status1.ok()) << status1;
  EXPECT_TRUE(holding.completed.load());
  EXPECT_TRUE(holding.released_by_progress.load())
      << "no other firing of node0 completed while its send was in flight";
  const std::vector<double>& actual =
      losses0.losses.size() >= losses1.losses.size() ? losses0.losses : losses1.losses;
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t step = 0; step < actual.size(); ++step) {
    EXPECT_EQ(actual[step], expected[step]) << "step " << step;
  }
}

TEST_F(SendOverlapTest, ARunCancelledWhileASendIsInFlightEndsAfterItsCompletion) {
  CreateRuns(nullptr, nullptr);
  ASSERT_NE(run0_, nullptr);
  HoldingTransport holding(
      in_process_.get(), [] { return int64_t{0}; }, 0);  // Held until the job stops.
  node0_->SetWireTransport(&holding);
  Status status1;
  std::thread node1_thread([&] { status1 = run1_->Run(); });
  Status status0;
  std::thread node0_thread([&] { status0 = run0_->Run(); });
  const Clock::time_point deadline = Clock::now() + 20s;
  while (!holding.holding.load() && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(holding.holding.load()) << "no send fired";
  const Clock::time_point cancelled_at = Clock::now();
  run0_->Cancel("cancelled by the test");
  run1_->Cancel("cancelled by the test");
  node0_thread.join();
  node1_thread.join();
  EXPECT_LT(Clock::now() - cancelled_at, 5s);
  // Run returned only after the send's completion came back.
  EXPECT_TRUE(holding.completed.load());
  EXPECT_EQ(status0.code(), StatusCode::kCancelled) << status0;
  EXPECT_NE(status0.message().find("cancelled by the test"), std::string::npos) << status0;
  node0_->SetWireTransport(nullptr);
  // Everything of the job goes; the devices host the plan again.
  run0_.reset();
  run1_.reset();
  node0_.reset();
  StatusOr<std::unique_ptr<HostedPlan>> again =
      HostedPlan::Load(runtime0_.get(), plan_, "node0", kJob + 1);
  EXPECT_TRUE(again.ok()) << again.status();
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
