// What several firings in flight buy: a chain of short kernels on one FIFO device queue, where
// each launch reaches the device only after a fixed host latency (a kernel launch, an event
// back to the host). One at a time, every firing pays the latency before the next is enqueued;
// with k in flight, k launches' latencies overlap. Simulated time, deterministic: the test
// host delivers messages in no time, and a small event loop here completes each kernel when
// the queue model says it ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "actors/testing/protocol_test_host.h"
#include "actors/testing/timed_completions.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace {

using plan::testing::PlanBuilder;
using testing::ProtocolTestHost;
using testing::TimedCompletions;

constexpr int64_t kLaunchLatencyNs = 10000;  // Host to device, per launch.
constexpr int64_t kKernelNs = 500;           // A short kernel.
constexpr int64_t kPieces = 64;

// source -> c0 -> c1 -> c2 -> sink, registers of 9 slots, the compute actors with `in_flight`
// firings in flight. A fill lives from its producer's launch to its consumer's completion, two
// launch latencies, so 2k slots (and one to spare) keep k of each actor in flight.
proto::Plan ComputeChain(int in_flight) {
  PlanBuilder plan(kPieces, 1);
  plan.AddRegister("x", 9).AddRegister("a", 9).AddRegister("b", 9).AddRegister("c", 9);
  plan.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  plan.AddActor({"c0", proto::ACTOR_KIND_COMPUTE, {"x"}, {"a"}});
  plan.AddActor({"c1", proto::ACTOR_KIND_COMPUTE, {"a"}, {"b"}});
  plan.AddActor({"c2", proto::ACTOR_KIND_COMPUTE, {"b"}, {"c"}});
  plan.AddActor({"sink", proto::ACTOR_KIND_SINK, {"c"}, {}});
  proto::Plan built = plan.Build();
  for (proto::ActorDef& actor : *built.mutable_actor()) {
    if (actor.kind() == proto::ACTOR_KIND_COMPUTE) actor.set_max_in_flight(in_flight);
  }
  return built;
}

// Runs the chain to its end; returns the simulated nanoseconds it took. Sources and sinks are
// host work (no time); compute kernels are ready kLaunchLatencyNs after their launch and run
// kKernelNs each, one at a time in the order they became ready (one FIFO queue).
int64_t RunChain(int in_flight) {
  int64_t now = 0;
  int64_t queue_free = 0;
  TimedCompletions completions;
  ProtocolTestHost::Options options;
  options.complete_immediately = false;
  options.record = false;
  std::vector<ActorDescription> actors = *DescribeActors(ComputeChain(in_flight));
  options.on_launch = [&](ActorId actor, const Firing& firing) {
    int64_t end = now;
    if (actors[actor].kind == ActorKind::kCompute) {
      const int64_t start = std::max(now + kLaunchLatencyNs, queue_free);
      end = queue_free = start + kKernelNs;
    }
    completions.Add(end, actor, firing.index);
  };
  ProtocolTestHost host(actors, options);
  host.Start();
  EXPECT_TRUE(completions.RunToEnd(&host, &now).ok());
  return now;
}

TEST(ActorProtocolInFlightGainTest, KFiringsInFlightFinishAChainOfShortKernelsAboutKTimesSooner) {
  const int64_t one = RunChain(1);
  const int64_t two = RunChain(2);
  const int64_t four = RunChain(4);
  // One at a time each actor's firing costs latency + kernel; the chain pipelines across its
  // actors, so about kPieces of them.
  EXPECT_GE(one, kPieces * (kLaunchLatencyNs + kKernelNs));
  EXPECT_LT(two * 1.8, one) << "one " << one << " ns, two " << two << " ns";
  EXPECT_LT(four * 3.5, one) << "one " << one << " ns, four " << four << " ns";
  // The queue still runs every kernel: never faster than the kernels back to back.
  EXPECT_GE(four, kPieces * 3 * kKernelNs);
  RecordProperty("one_in_flight_ns", std::to_string(one));
  RecordProperty("two_in_flight_ns", std::to_string(two));
  RecordProperty("four_in_flight_ns", std::to_string(four));
  std::printf("chain of %lld pieces: 1 in flight %lld ns, 2: %lld ns, 4: %lld ns\n",
              static_cast<long long>(kPieces), static_cast<long long>(one),
              static_cast<long long>(two), static_cast<long long>(four));
}

}  // namespace
}  // namespace actors
}  // namespace softwire
