// The Diagnostics service end to end on loopback: a real job (stuck on purpose, or slow) runs
// in this process, the server answers, the client asks with a deadline.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runtime/host/job_runner.h"
#include "runtime/host/test_plans.h"
#include "runtime/rpc/diagnostics_client.h"
#include "runtime/rpc/diagnostics_server.h"
#include "runtime/rpc/rpc_status.h"

namespace softwire {
namespace rpc {
namespace {

using runtime::testing::TestActorSpec;
using runtime::testing::TestPlan;
using Clock = std::chrono::steady_clock;

// a and b each wait for the other's first fill: stuck from the start, for good.
proto::Plan StuckPlan() {
  TestPlan builder(/*steps=*/3, /*pieces_per_step=*/1);
  builder.Register("x", 1).Register("a_out", 1).Register("b_out", 1);
  builder.Actor(TestActorSpec("source", proto::ACTOR_KIND_SOURCE, "piece_source", {}, {"x"}));
  builder.Actor(TestActorSpec("a", proto::ACTOR_KIND_COMPUTE, "double", {"x", "b_out"}, {"a_out"}));
  builder.Actor(TestActorSpec("b", proto::ACTOR_KIND_COMPUTE, "double", {"a_out"}, {"b_out"}));
  return builder.Build();
}

class DiagnosticsTest : public ::testing::Test {
 protected:
  DiagnosticsTest() { runtime::testing::RegisterTestKernels(&kernels_, nullptr); }

  // Loads `plan`, serves its wait states on a free loopback port, and runs it on a thread.
  void Start(const proto::Plan& plan) {
    runtime::RunOptions options;
    options.cpu_kernels = &kernels_;
    options.blas_threads = -1;
    options.stall_timeout_seconds = 30;  // The test cancels the job long before.
    options.caf.max_threads = 2;
    StatusOr<std::unique_ptr<runtime::LoadedPlan>> loaded =
        runtime::LoadedPlan::Load(plan, options);
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    loaded_ = std::move(*loaded);
    runtime::LoadedPlan* job = loaded_.get();
    StatusOr<std::unique_ptr<DiagnosticsServer>> server = DiagnosticsServer::Start(
        "127.0.0.1:0", "node0",
        [job](std::chrono::milliseconds timeout) { return job->DescribeWaits(timeout); });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    runner_ = std::thread([this] { result_ = loaded_->Run(); });
  }

  void TearDown() override {
    if (runner_.joinable()) {
      loaded_->Cancel("the test is over");
      runner_.join();
    }
    server_.reset();
  }

  // Asks until the job runs (its actors may not have started yet), for at most 5 s.
  StatusOr<proto::GetWaitStatesResponse> AskWhileRunning() {
    Clock::time_point give_up = Clock::now() + std::chrono::seconds(5);
    while (true) {
      StatusOr<proto::GetWaitStatesResponse> states =
          GetWaitStates(server_->address(), std::chrono::seconds(3));
      if (states.ok() || states.status().code() != StatusCode::kFailedPrecondition ||
          Clock::now() > give_up) {
        return states;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  runtime::KernelRegistry kernels_;
  std::unique_ptr<runtime::LoadedPlan> loaded_;
  std::unique_ptr<DiagnosticsServer> server_;
  std::thread runner_;
  StatusOr<runtime::RunResult> result_ = InternalError("not run");
};

TEST_F(DiagnosticsTest, AStuckJobSaysOverGrpcWhatEachActorWaitsFor) {
  Start(StuckPlan());
  StatusOr<proto::GetWaitStatesResponse> states = AskWhileRunning();
  // Until the job has settled into its stuck state: each actor answers when it gets to the
  // question, so on a loaded machine one answer may predate a message another answer already
  // reflects (a still waiting on 'x' while the source, answering later, is blocked). Settled:
  // two answers in a row that agree on every actor's state, register and peers.
  const auto signature = [](const proto::GetWaitStatesResponse& response) {
    std::string text;
    for (const proto::ActorWaitState& actor : response.actor()) {
      text += actor.actor() + ":" + std::to_string(actor.state()) + ":" + actor.register_name();
      for (const std::string& peer : actor.waiting_on()) text += "," + peer;
      text += ";";
    }
    return text;
  };
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(5);
  while (states.ok() && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    StatusOr<proto::GetWaitStatesResponse> again = AskWhileRunning();
    const bool settled = again.ok() && signature(*again) == signature(*states);
    states = std::move(again);
    if (settled) break;
  }
  ASSERT_TRUE(states.ok()) << states.status();
  EXPECT_EQ(states->job(), "runtime_test");
  EXPECT_EQ(states->actors(), 3);
  EXPECT_EQ(states->unfinished_actors(), 3);
  ASSERT_EQ(states->actor_size(), 3);
  const proto::ActorWaitState& a = states->actor(1);
  EXPECT_EQ(a.actor(), "a");
  EXPECT_EQ(a.node(), "node0");
  EXPECT_EQ(a.device(), "node0/cpu:0");
  EXPECT_EQ(a.state(), proto::ACTOR_WAIT_KIND_STARVED);
  EXPECT_EQ(a.register_name(), "b_out");
  EXPECT_EQ(a.sequence(), 0);
  ASSERT_EQ(a.waiting_on_size(), 1);
  EXPECT_EQ(a.waiting_on(0), "b");
  EXPECT_EQ(states->actor(0).state(), proto::ACTOR_WAIT_KIND_BLOCKED);
  EXPECT_EQ(states->actor(0).waiting_on(0), "a");
  const std::string& report = states->report();
  EXPECT_EQ(report.rfind("wait states of job 'runtime_test' after ", 0), 0u) << report;
  EXPECT_NE(report.find("actor 'b' (compute) on node0/cpu:0 at firing 0 (piece 0): starved: "
                        "needs fill 0 (piece 0) of register 'a_out' from actor 'a'"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("actor 'source' (source) on node0/cpu:0 at firing 1 (piece 1): blocked: "
                        "no free slot in register 'x'; fill 0 (piece 0) is still held by "
                        "actor 'a'"),
            std::string::npos)
      << report;
  // Asking changes nothing: the job still runs, still stuck.
  StatusOr<proto::GetWaitStatesResponse> again = AskWhileRunning();
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->unfinished_actors(), 3);
}

TEST_F(DiagnosticsTest, ASlowJobKeepsRunningWhileItIsAsked) {
  TestPlan builder(/*steps=*/2000, /*pieces_per_step=*/1);
  builder.Register("x", 1).Register("y", 1);
  builder.Actor(TestActorSpec("source", proto::ACTOR_KIND_SOURCE, "noop", {}, {"x"}));
  builder.Actor(TestActorSpec("slow", proto::ACTOR_KIND_COMPUTE, "sleep", {"x"}, {"y"})
                    .OnDevice(1)
                    .Attr("micros", 2000));
  builder.Actor(TestActorSpec("sink", proto::ACTOR_KIND_SINK, "noop", {"y"}, {}));
  Start(builder.Build());
  StatusOr<proto::GetWaitStatesResponse> first = AskWhileRunning();
  ASSERT_TRUE(first.ok()) << first.status();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  StatusOr<proto::GetWaitStatesResponse> second = AskWhileRunning();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_GT(second->completed_firings(), first->completed_firings());
  EXPECT_GT(second->elapsed_seconds(), first->elapsed_seconds());
  for (const proto::ActorWaitState& actor : second->actor()) {
    EXPECT_NE(actor.state(), proto::ACTOR_WAIT_KIND_UNSPECIFIED) << actor.description();
    EXPECT_FALSE(actor.description().empty());
  }
}

TEST_F(DiagnosticsTest, AServerWithoutARunningJobSaysSoAndTheClockAnswers) {
  Start(StuckPlan());
  loaded_->Cancel("stop before asking");
  runner_.join();
  StatusOr<proto::GetWaitStatesResponse> states =
      GetWaitStates(server_->address(), std::chrono::seconds(3));
  ASSERT_FALSE(states.ok());
  EXPECT_EQ(states.status().code(), StatusCode::kFailedPrecondition) << states.status();
  EXPECT_NE(states.status().message().find("is not running any more"), std::string::npos)
      << states.status();
  // The same machine's clock: the true offset is 0, within the bound.
  StatusOr<trace::ClockOffset> offset =
      EstimateRemoteClockOffset(server_->address(), 8, std::chrono::seconds(2));
  ASSERT_TRUE(offset.ok()) << offset.status();
  EXPECT_EQ(offset->probes, 8);
  EXPECT_LE(std::llabs(offset->offset_ns), offset->error_ns + 1000);
  EXPECT_LT(offset->error_ns, 50000000);
}

TEST(DiagnosticsServerTest, OnlyLoopbackAddressesAreServed) {
  auto source = [](std::chrono::milliseconds) -> StatusOr<runtime::JobWaitStates> {
    return FailedPreconditionError("no job");
  };
  StatusOr<std::unique_ptr<DiagnosticsServer>> wide =
      DiagnosticsServer::Start("0.0.0.0:0", "n", source);
  ASSERT_FALSE(wide.ok());
  EXPECT_EQ(wide.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wide.status().message().find("loopback"), std::string::npos);
  EXPECT_TRUE(IsLoopbackAddress("127.0.0.1:80"));
  EXPECT_TRUE(IsLoopbackAddress("localhost:0"));
  EXPECT_TRUE(IsLoopbackAddress("[::1]:5000"));
  EXPECT_FALSE(IsLoopbackAddress("10.0.0.1:80"));
  EXPECT_FALSE(IsLoopbackAddress("127.0.0.1"));
  EXPECT_FALSE(IsLoopbackAddress("127.0.0.1:x"));
}

TEST(DiagnosticsClientTest, NothingListeningFailsWithinTheDeadline) {
  // Bind a port and close it again, so nothing listens there.
  int port = 0;
  {
    auto source = [](std::chrono::milliseconds) -> StatusOr<runtime::JobWaitStates> {
      return FailedPreconditionError("no job");
    };
    StatusOr<std::unique_ptr<DiagnosticsServer>> server =
        DiagnosticsServer::Start("127.0.0.1:0", "n", source);
    ASSERT_TRUE(server.ok());
    port = (*server)->port();
  }
  const std::string address = "127.0.0.1:" + std::to_string(port);
  Clock::time_point start = Clock::now();
  StatusOr<proto::GetWaitStatesResponse> states = GetWaitStates(address, std::chrono::seconds(2));
  ASSERT_FALSE(states.ok());
  EXPECT_TRUE(states.status().code() == StatusCode::kUnavailable ||
              states.status().code() == StatusCode::kDeadlineExceeded)
      << states.status();
  EXPECT_NE(states.status().message().find(address), std::string::npos);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 3.0);
}

}  // namespace
}  // namespace rpc
}  // namespace softwire
