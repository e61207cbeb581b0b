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

#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/job_events.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/wire_transport.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "tests/runtime/testing/hosted_runs.h"

namespace softwire {
namespace runtime {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kSteps = 3;

using seams_testing::LossRecorder;
using seams_testing::RuntimeFor;

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
    plan_ = seams_testing::CompileMlp("2x1cpu", /*dp=*/1, /*pp=*/2, kSteps);
    int sends = 0;
    for (const proto::ActorDef& actor : plan_.actor()) {
      if (actor.kind() == proto::ACTOR_KIND_SEND) ++sends;
    }
    ASSERT_GT(sends, 0) << "the pipelined plan across nodes has no sends";
    Status hosted = seams_testing::HostOnTwoNodes(plan_, &kernels_, kJob, &shares_);
    ASSERT_TRUE(hosted.ok()) << hosted;
    in_process_ = std::make_unique<InProcessWireTransport>(&shares_.node0->register_slots());
  }

  // Creates both runs and connects them.
  void CreateRuns(JobEvents* events0, JobEvents* events1) {
    Status created = seams_testing::CreateConnectedRuns(seams_testing::Bounded(nullptr), events0,
                                                        events1, &shares_);
    ASSERT_TRUE(created.ok()) << created;
  }

  static constexpr actors::JobId kJob = 11;
  KernelRegistry kernels_;
  proto::Plan plan_;
  seams_testing::TwoNodeShares shares_;
  std::unique_ptr<InProcessWireTransport> in_process_;  // Writes into node0's slots.
};

TEST_F(SendOverlapTest, OtherFiringsOfTheDeviceCompleteWhileASendIsInFlight) {
  // The losses of the whole plan in one share, for comparison.
  std::vector<double> expected;
  {
    std::unique_ptr<NodeRuntime> whole_runtime = RuntimeFor(plan_, "", &kernels_);
    ASSERT_NE(whole_runtime, nullptr);
    StatusOr<std::unique_ptr<HostedPlan>> whole = whole_runtime->Host(plan_);
    ASSERT_TRUE(whole.ok()) << whole.status();
    expected = seams_testing::RunOnce(whole_runtime.get(), whole->get());
  }
  ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));

  LossRecorder losses0(plan_);
  LossRecorder losses1(plan_);
  CreateRuns(&losses0, &losses1);
  ASSERT_NE(shares_.run0, nullptr);
  // Released once node0 completed two more firings than when the fill was handed over: firings
  // that ran on node0's one strand while the send was in flight.
  HoldingTransport holding(
      in_process_.get(), [&] { return shares_.run0->completed_firings(); }, 2);
  shares_.node0->SetWireTransport(&holding);
  Status status1;
  std::thread node1_thread([&] { status1 = shares_.run1->Run(); });
  Status status0 = shares_.run0->Run();
  node1_thread.join();
  shares_.node0->SetWireTransport(nullptr);
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
  ASSERT_NE(shares_.run0, nullptr);
  HoldingTransport holding(
      in_process_.get(), [] { return int64_t{0}; }, 0);  // Held until the job stops.
  shares_.node0->SetWireTransport(&holding);
  Status status1;
  std::thread node1_thread([&] { status1 = shares_.run1->Run(); });
  Status status0;
  std::thread node0_thread([&] { status0 = shares_.run0->Run(); });
  const Clock::time_point deadline = Clock::now() + 20s;
  while (!holding.holding.load() && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(holding.holding.load()) << "no send fired";
  const Clock::time_point cancelled_at = Clock::now();
  shares_.run0->Cancel("cancelled by the test");
  shares_.run1->Cancel("cancelled by the test");
  node0_thread.join();
  node1_thread.join();
  EXPECT_LT(Clock::now() - cancelled_at, 5s);
  // Run returned only after the send's completion came back.
  EXPECT_TRUE(holding.completed.load());
  EXPECT_EQ(status0.code(), StatusCode::kCancelled) << status0;
  EXPECT_NE(status0.message().find("cancelled by the test"), std::string::npos) << status0;
  shares_.node0->SetWireTransport(nullptr);
  // Everything of the job goes; the devices host the plan again.
  shares_.run0.reset();
  shares_.run1.reset();
  shares_.node0.reset();
  StatusOr<std::unique_ptr<HostedPlan>> again =
      HostedPlan::Load(shares_.runtime0.get(), plan_, "node0", kJob + 1);
  EXPECT_TRUE(again.ok()) << again.status();
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
