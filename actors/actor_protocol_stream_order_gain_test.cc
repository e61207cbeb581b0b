// What stream-ordered edges buy: a chain of short kernels on one in-order device queue, where
// the host learns of each kernel's completion a fixed latency after it ended (an event, a
// completion thread, a message). Without marks every edge waits for that latency before the
// consumer's kernel is enqueued; with them a consumer is enqueued right after its producer,
// and only an actor's own next firing waits for its completion. Simulated time,
// deterministic: the test host delivers messages in no time, and a small event loop here
// reports each completion when the queue model says.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "actors/stream_ordered_edges.h"
#include "actors/testing/protocol_test_host.h"
#include "actors/testing/timed_completions.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace {

using plan::testing::PlanBuilder;
using testing::ProtocolTestHost;
using testing::TimedCompletions;

constexpr int64_t kCompletionLatencyNs = 20000;  // Kernel end to the host's OnFiringDone.
constexpr int64_t kKernelNs = 1000;              // A short kernel.
constexpr int64_t kPieces = 4;                   // Few pieces, a long chain: a training step.
constexpr int kChain = 16;                       // Compute actors.

// source -> c0 -> ... -> c15 -> sink, registers of 4 slots; compute actors with `in_flight`.
proto::Plan ComputeChain(int in_flight) {
  PlanBuilder plan(kPieces, 1);
  for (int r = 0; r <= kChain; ++r) plan.AddRegister("r" + std::to_string(r), 4);
  plan.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"r0"}});
  for (int c = 0; c < kChain; ++c) {
    plan.AddActor({"c" + std::to_string(c),
                   proto::ACTOR_KIND_COMPUTE,
                   {"r" + std::to_string(c)},
                   {"r" + std::to_string(c + 1)}});
  }
  plan.AddActor({"sink", proto::ACTOR_KIND_SINK, {"r" + std::to_string(kChain)}, {}});
  proto::Plan built = plan.Build();
  for (proto::ActorDef& actor : *built.mutable_actor()) {
    if (actor.kind() == proto::ACTOR_KIND_COMPUTE) actor.set_max_in_flight(in_flight);
  }
  return built;
}

// Runs the chain to its end; returns the simulated nanoseconds it took. Sources and sinks are
// host work (no time, no queue); compute kernels run kKernelNs each on one FIFO queue in
// launch order, and their completions reach the host kCompletionLatencyNs after they end.
int64_t RunChain(int in_flight, bool marked) {
  int64_t now = 0;
  int64_t queue_free = 0;
  TimedCompletions completions;
  std::vector<ActorDescription> actors = *DescribeActors(ComputeChain(in_flight));
  std::vector<int64_t> queue_of(actors.size(), -1);
  for (const ActorDescription& actor : actors) {
    if (marked && actor.kind == ActorKind::kCompute) queue_of[actor.id] = 0;
  }
  EXPECT_TRUE(MarkStreamOrderedEdges(&actors, queue_of).ok());
  ProtocolTestHost::Options options;
  options.complete_immediately = false;
  options.record = false;
  options.on_launch = [&](ActorId actor, const Firing& firing) {
    int64_t report = now;
    if (actors[actor].kind == ActorKind::kCompute) {
      const int64_t end = queue_free = std::max(now, queue_free) + kKernelNs;
      report = end + kCompletionLatencyNs;
    }
    completions.Add(report, actor, firing.index);
  };
  ProtocolTestHost host(actors, options);
  host.Start();
  EXPECT_TRUE(completions.RunToEnd(&host, &now).ok());
  return now;
}

TEST(StreamOrderedEdgesGainTest, AChainOnOneQueueFinishesSeveralTimesSoonerWithMarks) {
  const int64_t plain = RunChain(1, false);
  const int64_t marked = RunChain(1, true);
  const int64_t plain_two = RunChain(2, false);
  const int64_t marked_two = RunChain(2, true);
  // Without marks every edge costs a kernel and a completion latency: the first piece alone
  // crosses the chain in kChain of them.
  EXPECT_GE(plain, kChain * (kKernelNs + kCompletionLatencyNs));
  // With them the chain is enqueued back to back; each actor still waits for its own
  // completion before its next piece: about kPieces latencies in all.
  EXPECT_LT(marked * 3, plain) << "plain " << plain << " ns, marked " << marked << " ns";
  EXPECT_LT(marked_two * 3, plain_two) << "plain " << plain_two << " ns, marked " << marked_two;
  // The queue still runs every kernel: never faster than the kernels back to back.
  EXPECT_GE(marked_two, kPieces * kChain * kKernelNs);
  RecordProperty("plain_ns", std::to_string(plain));
  RecordProperty("marked_ns", std::to_string(marked));
  std::printf(
      "chain of %d kernels of %lld ns, %lld pieces, completion latency %lld ns: 1 in flight "
      "%lld ns plain, %lld ns marked (%.1fx); 2 in flight %lld ns plain, %lld ns marked "
      "(%.1fx)\n",
      kChain, static_cast<long long>(kKernelNs), static_cast<long long>(kPieces),
      static_cast<long long>(kCompletionLatencyNs), static_cast<long long>(plain),
      static_cast<long long>(marked), static_cast<double>(plain) / marked,
      static_cast<long long>(plain_two), static_cast<long long>(marked_two),
      static_cast<double>(plain_two) / marked_two);
}

}  // namespace
}  // namespace actors
}  // namespace softwire
