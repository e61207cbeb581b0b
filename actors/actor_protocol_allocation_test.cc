// The protocol is the hot path of every firing: after warm-up, a host that reuses its Outbox
// must see no heap allocation at all. This binary counts every operator new
// (base/testing/allocation_counter.h) while a small allocation-free host (a ring buffer of
// messages, one Outbox per actor) runs a training loop and a chain for many pieces. It also prints
// the cost per firing, for the record.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include "actors/actor_protocol.h"
#include "actors/stream_ordered_edges.h"
#include "base/testing/allocation_counter.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace {

using plan::testing::PlanBuilder;

// Delivers messages first-in first-out from a fixed ring; completes kernels at once.
class RingHost {
 public:
  explicit RingHost(const std::vector<ActorDescription>* actors)
      : actors_(actors), ring_(1 << 12), outboxes_(actors->size()) {
    for (const ActorDescription& actor : *actors) {
      protocols_.push_back(std::make_unique<ActorProtocol>(&actor));
    }
  }

  void Start() {
    for (size_t a = 0; a < protocols_.size(); ++a) {
      outboxes_[a].clear();
      protocols_[a]->Start(&outboxes_[a]);
      Handle(static_cast<ActorId>(a));
    }
  }

  // Delivers up to `count` messages; returns how many it delivered.
  int64_t Deliver(int64_t count) {
    int64_t delivered = 0;
    while (delivered < count && head_ != tail_) {
      const Envelope envelope = ring_[head_];
      head_ = (head_ + 1) % ring_.size();
      Outbox& outbox = outboxes_[envelope.message.to];
      outbox.clear();
      ActorProtocol& receiver = *protocols_[envelope.message.to];
      Status status;
      switch (envelope.message.type) {
        case OutgoingMessage::Type::kReady:
          status = receiver.OnReady(envelope.from, envelope.message.ready(), &outbox);
          break;
        case OutgoingMessage::Type::kRelease:
          status = receiver.OnRelease(envelope.from, envelope.message.release(), &outbox);
          break;
        case OutgoingMessage::Type::kEndOfStream:
          status = receiver.OnEndOfStream(envelope.from, envelope.message.end_of_stream(), &outbox);
          break;
      }
      CHECK(status.ok()) << status;
      Handle(envelope.message.to);
      ++delivered;
    }
    return delivered;
  }

  bool AllFinished() const {
    for (const auto& protocol : protocols_) {
      if (!protocol->finished()) return false;
    }
    return true;
  }
  int64_t firings() const { return firings_; }

 private:
  struct Envelope {
    ActorId from;
    OutgoingMessage message;
  };

  void Handle(ActorId actor) {
    Outbox& outbox = outboxes_[actor];
    while (true) {
      for (const OutgoingMessage& message : outbox.messages) {
        ring_[tail_] = Envelope{actor, message};
        tail_ = (tail_ + 1) % ring_.size();
        CHECK_NE(tail_, head_) << "ring full";
      }
      if (!outbox.launch) return;
      const int64_t index = outbox.launch->index;
      ++firings_;
      outbox.clear();
      CHECK(protocols_[actor]->OnFiringDone(index, &outbox).ok());
    }
  }

  const std::vector<ActorDescription>* actors_;
  std::vector<std::unique_ptr<ActorProtocol>> protocols_;
  std::vector<Envelope> ring_;
  size_t head_ = 0;
  size_t tail_ = 0;
  std::vector<Outbox> outboxes_;
  int64_t firings_ = 0;
};

proto::Plan TrainingLoopAndChain(int64_t steps, int64_t pieces_per_step) {
  PlanBuilder builder(steps, pieces_per_step);
  builder.AddRegister("x", 2).AddRegister("w", 1).AddRegister("h", 2).AddRegister("dw", 2);
  builder.AddRegister("g", 1).AddRegister("loss", 2);
  builder.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  builder.AddActor({"weight", proto::ACTOR_KIND_VARIABLE, {}, {"w"}});
  builder.AddActor({"forward", proto::ACTOR_KIND_COMPUTE, {"x", "w"}, {"h", "loss"}});
  builder.AddActor({"backward", proto::ACTOR_KIND_COMPUTE, {"h", "x"}, {"dw"}});
  builder.AddActor({"acc", proto::ACTOR_KIND_ACCUMULATE, {"dw"}, {"g"}});
  builder.AddActor({"update", proto::ACTOR_KIND_UPDATE, {"g", "w"}, {}, 0, {"w"}});
  builder.AddActor({"report", proto::ACTOR_KIND_SINK, {"loss"}, {}});
  return builder.Build();
}

TEST(ActorProtocolAllocationTest, AfterWarmUpNoCallAllocates) {
  StatusOr<std::vector<ActorDescription>> actors =
      DescribeActors(TrainingLoopAndChain(/*steps=*/20000, /*pieces_per_step=*/4));
  ASSERT_TRUE(actors.ok()) << actors.status();
  RingHost host(&*actors);
  host.Start();
  host.Deliver(1000);  // Warm-up: every vector reaches its working capacity.
  softwire::testing::AllocationCounter counter;
  const auto begin = std::chrono::steady_clock::now();
  const int64_t firings_before = host.firings();
  const int64_t delivered = host.Deliver(int64_t{1} << 40);
  const auto end = std::chrono::steady_clock::now();
  EXPECT_EQ(counter.allocations(), 0);
  EXPECT_TRUE(host.AllFinished());
  const int64_t firings = host.firings() - firings_before;
  EXPECT_GT(firings, 400000);
  const double nanoseconds = std::chrono::duration<double, std::nano>(end - begin).count();
  std::printf("%lld firings, %lld messages: %.0f ns per firing, %.0f ns per message\n",
              static_cast<long long>(firings), static_cast<long long>(delivered),
              nanoseconds / firings, nanoseconds / delivered);
}

TEST(ActorProtocolAllocationTest, AfterWarmUpNoCallAllocatesWithStreamOrderedEdges) {
  StatusOr<std::vector<ActorDescription>> actors =
      DescribeActors(TrainingLoopAndChain(/*steps=*/20000, /*pieces_per_step=*/4));
  ASSERT_TRUE(actors.ok()) << actors.status();
  // Everything but the source and the sink on one queue: Readies and Releases at launch.
  std::vector<int64_t> queue_of(actors->size(), 0);
  for (const ActorDescription& actor : *actors) {
    if (actor.kind == ActorKind::kSource || actor.kind == ActorKind::kSink) {
      queue_of[static_cast<size_t>(actor.id)] = -1;
    }
  }
  ASSERT_TRUE(MarkStreamOrderedEdges(&*actors, queue_of).ok());
  RingHost host(&*actors);
  host.Start();
  host.Deliver(1000);
  softwire::testing::AllocationCounter counter;
  const int64_t firings_before = host.firings();
  host.Deliver(int64_t{1} << 40);
  EXPECT_EQ(counter.allocations(), 0);
  EXPECT_TRUE(host.AllFinished());
  EXPECT_GT(host.firings() - firings_before, 400000);
}

}  // namespace
}  // namespace actors
}  // namespace softwire
