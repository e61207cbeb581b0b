// Stream-ordered edges (docs/PROTOCOL.md): which edges MarkStreamOrderedEdges marks, the exact
// messages a chain on one queue sends at launch, and random plans on random queues whose
// kernels are checked when they execute, against the same plans run one firing at a time with
// messages only at completions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "actors/actor_protocol.h"
#include "actors/stream_ordered_edges.h"
#include "actors/testing/device_queue_run.h"
#include "actors/testing/protocol_test_host.h"
#include "actors/testing/random_plan_maker.h"
#include "actors/testing/timed_completions.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace {

using plan::testing::PlanBuilder;
using ::testing::HasSubstr;
using testing::JoinLines;
using testing::ProtocolTestHost;
using testing::QueueRunResult;
using testing::RandomPlanMaker;
using testing::RunOnDeviceQueues;

// variable w; source x; c0(x, w) -> y; c1(y) -> z; sink(z); acc(y) -> g; update(g, w in place).
proto::Plan TrainingPlan() {
  PlanBuilder plan(2, 1);
  plan.AddRegister("w", 1).AddRegister("x", 2).AddRegister("y", 2).AddRegister("z", 2);
  plan.AddRegister("g", 1);
  plan.AddActor({"variable", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  plan.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  plan.AddActor({"c0", proto::ACTOR_KIND_COMPUTE, {"x", "w"}, {"y"}});
  plan.AddActor({"c1", proto::ACTOR_KIND_COMPUTE, {"y"}, {"z"}});
  plan.AddActor({"sink", proto::ACTOR_KIND_SINK, {"z"}, {}});
  plan.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"y"}, {"g"}});
  plan.AddActor({"update", proto::ACTOR_KIND_UPDATE, {"g", "w"}, {}, 0, {"w"}});
  return plan.Build();
}

std::vector<ActorDescription> Marked(const proto::Plan& plan, const std::vector<int64_t>& queues) {
  StatusOr<std::vector<ActorDescription>> actors = DescribeActors(plan);
  EXPECT_TRUE(actors.ok()) << actors.status();
  Status status = MarkStreamOrderedEdges(&*actors, queues);
  EXPECT_TRUE(status.ok()) << status;
  return *actors;
}

bool ReadyAtLaunch(const ActorDescription& producer, int output, ActorId consumer) {
  for (const ConsumerDescription& c : producer.outputs[output].consumers) {
    if (c.actor == consumer) return c.ready_at_launch;
  }
  ADD_FAILURE() << "no consumer " << consumer;
  return false;
}

TEST(StreamOrderedEdgesTest, OnlyEdgesWithinOneQueueAreMarked) {
  // Actors: variable 0, source 1, c0 2, c1 3, sink 4, acc 5, update 6.
  std::vector<ActorDescription> actors = Marked(TrainingPlan(), {-1, -1, 0, 0, -1, 1, -1});
  EXPECT_TRUE(ReadyAtLaunch(actors[2], 0, 3));          // y: c0 -> c1, both on queue 0.
  EXPECT_FALSE(ReadyAtLaunch(actors[2], 0, 5));         // y: c0 -> acc on queue 1.
  EXPECT_TRUE(actors[3].inputs[0].release_at_launch);   // c1's y: c0 is its only writer.
  EXPECT_FALSE(actors[5].inputs[0].release_at_launch);  // acc's y: c0 is on another queue.
  EXPECT_FALSE(actors[2].inputs[0].release_at_launch);  // c0's x: the source has no queue.
  EXPECT_FALSE(ReadyAtLaunch(actors[0], 0, 2));         // w: the variable has no queue.
  EXPECT_FALSE(actors[2].inputs[1].release_at_launch);

  // The variable and c0 on queue 0, its in-place writer (update) on queue 1: c0 gets w at
  // launch, but must release it at completion, else the update could overwrite w before c0
  // read it.
  actors = Marked(TrainingPlan(), {0, -1, 0, 0, -1, 1, 1});
  EXPECT_TRUE(ReadyAtLaunch(actors[0], 0, 2));
  EXPECT_FALSE(actors[2].inputs[1].release_at_launch);
  EXPECT_FALSE(actors[6].inputs[1].release_at_launch);  // update's w: variable on queue 0.
  EXPECT_FALSE(ReadyAtLaunch(actors[0], 0, 6));         // Phase 1: never at launch.

  // All three on queue 0: c0 releases w at launch, and so does the update.
  actors = Marked(TrainingPlan(), {0, -1, 0, 0, -1, 1, 0});
  EXPECT_TRUE(actors[2].inputs[1].release_at_launch);
  EXPECT_TRUE(actors[6].inputs[1].release_at_launch);
  EXPECT_FALSE(actors[6].inputs[0].release_at_launch);  // g: acc on queue 1.

  // Marking again with other keys replaces every flag.
  actors = Marked(TrainingPlan(), {0, -1, 0, 0, -1, 1, 0});
  ASSERT_TRUE(MarkStreamOrderedEdges(&actors, std::vector<int64_t>(7, -1)).ok());
  EXPECT_FALSE(ReadyAtLaunch(actors[2], 0, 3));
  EXPECT_FALSE(actors[2].inputs[1].release_at_launch);
}

TEST(StreamOrderedEdgesTest, AMalformedQueueListIsRefusedNamingTheActor) {
  StatusOr<std::vector<ActorDescription>> actors = DescribeActors(TrainingPlan());
  ASSERT_TRUE(actors.ok());
  Status status = MarkStreamOrderedEdges(&*actors, {0, 0});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("2 queue keys for 7 actors"));
  status = MarkStreamOrderedEdges(&*actors, {-1, -1, -2, 0, -1, -1, -1});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'c0' (2): queue key -2"));
}

// source -> c0 -> c1 -> sink over 2 pieces; c0 and c1 on queue 0, source and sink on none.
std::unique_ptr<ProtocolTestHost> QueueChainHost() {
  PlanBuilder plan(2, 1);
  plan.AddRegister("x", 2).AddRegister("a", 2).AddRegister("b", 2);
  plan.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  plan.AddActor({"c0", proto::ACTOR_KIND_COMPUTE, {"x"}, {"a"}});
  plan.AddActor({"c1", proto::ACTOR_KIND_COMPUTE, {"a"}, {"b"}});
  plan.AddActor({"sink", proto::ACTOR_KIND_SINK, {"b"}, {}});
  ProtocolTestHost::Options options;
  options.complete_immediately = false;
  return std::make_unique<ProtocolTestHost>(Marked(plan.Build(), {-1, 0, 0, -1}), options);
}

TEST(StreamOrderedEdgesTest, AChainOnOneQueueSendsReadyAndReleaseAtLaunch) {
  std::unique_ptr<ProtocolTestHost> host = QueueChainHost();
  host->Start();
  ASSERT_TRUE(host->Run().ok());
  ASSERT_TRUE(host->Complete("source").ok());
  ASSERT_TRUE(host->Run().ok());
  // The transcript lists an outbox's messages before its launch; the host enqueued the launch
  // before any of them was delivered.
  const std::vector<std::string> expected = {
      "source: launch 0",
      "source -> c0: Ready(x, slot 0, seq 0)",  // The source has no queue: at completion.
      "source: launch 1",
      "c0 -> c1: Ready(a, slot 0, seq 0)",  // At c0's launch: c1 runs after it on queue 0.
      "c0: launch 0",
      "c1 -> c0: Release(a, slot 0, seq 0)",  // At c1's launch: c0's next write follows it.
      "c1: launch 0",
  };
  EXPECT_EQ(JoinLines(host->TakeTranscript()), JoinLines(expected));
  // c1 runs; c0 got its release before either kernel ran, so a's slot 0 is free again.
  EXPECT_EQ(host->protocol("c0").occupied_slots(0), 0);
  EXPECT_EQ(host->protocol("c1").DescribeWait().kind, WaitState::Kind::kRunning);
  // c0's completion releases x (the source has no queue) and sends nothing else; c1's sends
  // b to the sink (no queue) only now.
  ASSERT_TRUE(host->Complete("c0").ok());
  ASSERT_TRUE(host->Run().ok());
  const std::vector<std::string> after_c0 = {
      "c0 -> source: Release(x, slot 0, seq 0)",
  };
  EXPECT_EQ(JoinLines(host->TakeTranscript()), JoinLines(after_c0));
  ASSERT_TRUE(host->Complete("c1").ok());
  ASSERT_TRUE(host->Run().ok());
  std::vector<std::string> after_c1 = host->TakeTranscript();
  ASSERT_FALSE(after_c1.empty());
  EXPECT_EQ(after_c1[0], "c1 -> sink: Ready(b, slot 0, seq 0)");
}

TEST(StreamOrderedEdgesTest, AReaderOfAVariableWhoseUpdateRunsOnAnotherQueueReleasesAtCompletion) {
  // Actors: variable 0, source 1, c0 2, c1 3, sink 4, acc 5, update 6. The variable, c0 and c1
  // on queue 0; acc and the update on queue 1.
  ProtocolTestHost::Options options;
  options.complete_immediately = false;
  ProtocolTestHost host(Marked(TrainingPlan(), {0, -1, 0, 0, -1, 1, 1}), options);
  host.Start();
  ASSERT_TRUE(host.Run().ok());
  ASSERT_TRUE(host.Complete("source").ok());
  ASSERT_TRUE(host.Run().ok());
  const std::vector<std::string> launches = {
      "variable -> c0: Ready(w, slot 0, seq 0)",  // At the variable's launch: c0 shares queue 0.
      "variable: launch 0",
      "source: launch 0",
      "source -> c0: Ready(x, slot 0, seq 0)",
      "source: launch 1",
      "c0 -> c1: Ready(y, slot 0, seq 0)",  // c0 launched before the variable's kernel ran.
      "c0: launch 0",
      "c1 -> c0: Release(y, slot 0, seq 0)",  // y's only writer, c0, shares c1's queue.
      "c1: launch 0",
  };
  EXPECT_EQ(JoinLines(host.TakeTranscript()), JoinLines(launches));
  // c0 completes before the host heard of the variable's completion (its kernel ran first on
  // queue 0). c0 releases w only now: w's in-place writer, the update, runs on queue 1.
  ASSERT_TRUE(host.Complete("c0").ok());
  ASSERT_TRUE(host.Run().ok());
  const std::vector<std::string> after_c0 = {
      "c0 -> source: Release(x, slot 0, seq 0)",
      "c0 -> variable: Release(w, slot 0, seq 0)",    // At completion: the update is elsewhere.
      "c0 -> acc: Ready(y, slot 0, seq 0)",           // acc is on queue 1: at completion.
      "variable -> update: Ready(w, slot 0, seq 0)",  // Every reader of w0 ran.
      "acc -> update: Ready(g, slot 0, seq 0)",       // At acc's launch: both on queue 1.
      "acc: launch 0",
      "update -> acc: Release(g, slot 0, seq 0)",  // At launch: acc, g's writer, shares queue 1.
      "update: launch 0",
  };
  EXPECT_EQ(JoinLines(host.TakeTranscript()), JoinLines(after_c0));
  // The update writes w in place on queue 1; it releases w at completion (the variable is on
  // queue 0), and only then may the variable begin its next fill.
  EXPECT_EQ(host.protocol("variable").DescribeWait().kind, WaitState::Kind::kRunning);
  ASSERT_TRUE(host.Complete("variable").ok());
  ASSERT_TRUE(host.Run().ok());
  EXPECT_EQ(host.protocol("variable").DescribeWait().kind, WaitState::Kind::kBlocked);
  EXPECT_EQ(host.protocol("variable").DescribeWait().waiting_on, (std::vector<ActorId>{6}));
  host.TakeTranscript();
  ASSERT_TRUE(host.Complete("update").ok());
  ASSERT_TRUE(host.Run().ok());
  const std::vector<std::string> after_update = host.TakeTranscript();
  ASSERT_GE(after_update.size(), 3u);
  EXPECT_EQ(after_update[0], "update -> variable: Release(w, slot 0, seq 0)");
  EXPECT_EQ(after_update[1], "variable -> c0: Ready(w, slot 0, seq 1)");
  EXPECT_EQ(after_update[2], "variable: launch 1");
}

// What the random runs exercised, summed over runs.
struct StreamRunTotals {
  int runs = 0;
  int64_t launches_ahead = 0;
  int64_t releases_ahead = 0;
  int runs_with_several_in_flight = 0;
};

void ExpectSameExecutions(const QueueRunResult& run, const QueueRunResult& reference,
                          const proto::Plan& plan) {
  ASSERT_EQ(run.executed.size(), reference.executed.size());
  for (size_t a = 0; a < reference.executed.size(); ++a) {
    ASSERT_TRUE(run.executed[a] == reference.executed[a])
        << plan.actor(static_cast<int>(a)).name()
        << " bound or read or wrote other than at one firing at a time with no marks";
  }
}

TEST(StreamOrderedEdgesTest, RandomPlansOnRandomQueuesExecuteWhatOneAtATimeDoes) {
  constexpr int kPlans = 3000;
  StreamRunTotals totals;
  for (int p = 0; p < kPlans; ++p) {
    const uint64_t plan_seed = 9000 + static_cast<uint64_t>(p);
    const proto::Plan one_at_a_time = RandomPlanMaker(plan_seed).Make();
    SCOPED_TRACE("plan seed " + std::to_string(plan_seed));
    const std::vector<int64_t> no_queues(static_cast<size_t>(one_at_a_time.actor_size()), -1);
    const QueueRunResult reference =
        RunOnDeviceQueues(*DescribeActors(one_at_a_time), no_queues, plan_seed);
    ASSERT_TRUE(reference.violations.empty()) << reference.violations[0];
    for (int k : {1, 2, 4}) {
      for (int run = 0; run < 2; ++run) {
        const uint64_t seed = plan_seed * 101 + static_cast<uint64_t>(k * 10 + run);
        proto::Plan plan = one_at_a_time;
        if (k > 1) testing::RandomizeMaxInFlight(k, seed, &plan);
        const std::vector<int64_t> queues = testing::RandomQueueKeys(plan, seed);
        SCOPED_TRACE("k " + std::to_string(k) + ", run " + std::to_string(run));
        const QueueRunResult result = RunOnDeviceQueues(Marked(plan, queues), queues, seed);
        ASSERT_TRUE(result.violations.empty()) << result.violations[0];
        ExpectSameExecutions(result, reference, one_at_a_time);
        if (::testing::Test::HasFailure()) return;
        ++totals.runs;
        totals.launches_ahead += result.launches_ahead_of_inputs;
        totals.releases_ahead += result.releases_ahead_of_reads;
        totals.runs_with_several_in_flight += k > 1 && result.most_in_flight > 1;
      }
    }
  }
  // The runs did launch consumers ahead of their producers' kernels, release ahead of reads
  // and put several firings in flight (else the test proves nothing).
  EXPECT_GT(totals.launches_ahead, totals.runs);
  EXPECT_GT(totals.releases_ahead, totals.runs);
  EXPECT_GT(totals.runs_with_several_in_flight, totals.runs / 10);  // Of 2/3 with k > 1.
  std::printf(
      "%d runs (%d with several in flight): %lld launches ahead of their inputs, %lld releases "
      "ahead of reads\n",
      totals.runs, totals.runs_with_several_in_flight,
      static_cast<long long>(totals.launches_ahead), static_cast<long long>(totals.releases_ahead));
}

// Marks correctly, then applies `mutate` to every description; returns how many of `plans`
// random plans the run found unsafe.
template <typename Mutate>
int PlansCaughtAfter(Mutate mutate, int plans) {
  int caught = 0;
  for (int p = 0; p < plans; ++p) {
    const uint64_t seed = 7000 + static_cast<uint64_t>(p);
    proto::Plan plan = RandomPlanMaker(seed).Make();
    testing::RandomizeMaxInFlight(2, seed, &plan);
    const std::vector<int64_t> queues = testing::RandomQueueKeys(plan, seed);
    std::vector<ActorDescription> actors = Marked(plan, queues);
    for (ActorDescription& actor : actors) mutate(queues, &actor);
    for (int run = 0; run < 3; ++run) {
      if (!RunOnDeviceQueues(actors, queues, seed * 3 + run).violations.empty()) {
        ++caught;
        break;
      }
    }
  }
  return caught;
}

TEST(StreamOrderedEdgesTest, TheRunCatchesAReleaseAtLaunchToAProducerOnAnotherQueue) {
  // The hole the release rule closes: an input released at launch although its producer (or
  // its in-place writer) runs on another queue, so the next write may run before the read.
  const int caught = PlansCaughtAfter(
      [](const std::vector<int64_t>& queues, ActorDescription* actor) {
        for (InputDescription& input : actor->inputs) {
          if (queues[static_cast<size_t>(actor->id)] >= 0) input.release_at_launch = true;
        }
      },
      200);
  EXPECT_GT(caught, 10);
}

TEST(StreamOrderedEdgesTest, TheRunCatchesAReadyAtLaunchToAConsumerOnAnotherQueue) {
  const int caught = PlansCaughtAfter(
      [](const std::vector<int64_t>&, ActorDescription* actor) {
        for (OutputDescription& output : actor->outputs) {
          for (ConsumerDescription& consumer : output.consumers) {
            consumer.ready_at_launch = consumer.phase == 0;
          }
        }
      },
      200);
  EXPECT_GT(caught, 10);
}

}  // namespace
}  // namespace actors
}  // namespace softwire
