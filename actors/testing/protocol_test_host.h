// ProtocolTestHost: runs the ActorProtocols of a whole plan in one thread, with a
// deterministic scheduler, and records what happens as a transcript (CAF's deterministic test
// coordinator, reduced to the three protocol messages):
//
//   source: launch 0
//   source -> relu: Ready(x, slot 0, seq 0)
//   relu -> source: Release(x, slot 0, seq 0)
//   source -> relu: EndOfStream(x)
//   relu: finished
//
// Messages are recorded when sent, in outbox order. In kFifo order they are delivered in the
// order they were sent, one at a time; in kRandom order a seeded generator picks which to
// deliver next, keeping the order within each (sender, receiver) pair, as CAF does. Kernels
// complete as soon as they launch (complete_immediately) or when the test says so
// (Complete); in kRandom order without complete_immediately, the generator also decides when
// each running firing completes. An actor with max_in_flight > 1 gets every launch the protocol
// allows (LaunchAnother); its firings complete in launch order (a FIFO device queue), or in any
// order with reorder_completions. Test-only: not thread-safe, CHECK-fails on misuse.
#ifndef SOFTWIRE_ACTORS_TESTING_PROTOCOL_TEST_HOST_H_
#define SOFTWIRE_ACTORS_TESTING_PROTOCOL_TEST_HOST_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "actors/actor_protocol.h"
#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace actors {
namespace testing {

class ProtocolTestHost {
 public:
  enum class Order { kFifo, kRandom };
  struct Options {
    Order order = Order::kFifo;
    uint64_t seed = 0;
    bool complete_immediately = true;
    bool record = true;  // Keep a transcript.
    // kRandom without complete_immediately: any firing in flight of an actor may complete
    // next, not only its oldest (completions out of launch order).
    bool reorder_completions = false;
    // kRandom without complete_immediately: false leaves every completion to the test
    // (CompleteFiring), so Step only delivers messages; a test modelling device queues
    // decides when each kernel runs and when its completion reaches the host.
    bool step_completes_firings = true;
    // Called for every firing launched and every message sent, before anything else happens.
    std::function<void(ActorId actor, const Firing& firing)> on_launch;
    std::function<void(ActorId actor, int64_t index)> on_complete;
    std::function<void(ActorId from, const OutgoingMessage& message)> on_send;
  };

  // Describes the plan's actors (DescribeActors errors pass through).
  static StatusOr<std::unique_ptr<ProtocolTestHost>> Create(const proto::Plan& plan,
                                                            Options options);
  ProtocolTestHost(std::vector<ActorDescription> actors, Options options);

  // Starts every actor, in id order.
  void Start();
  // Does one thing: delivers one message, or completes one running firing (kRandom without
  // complete_immediately). Returns false when nothing is left to do, or the first error.
  StatusOr<bool> Step();
  // Steps until nothing is left; returns the first error. Manual completions stay pending.
  Status Run();
  // Completes the oldest firing in flight of `actor` (manual completion).
  Status Complete(const std::string& actor);
  // Completes firing `index` of `actor`, which must be in flight (out of order when it is not
  // the oldest).
  Status CompleteFiring(ActorId actor, int64_t index);
  // The firings of `actor` launched and awaiting completion, in launch order.
  const std::vector<int64_t>& in_flight(ActorId actor) const { return running_[actor]; }
  // Delivers a message to `to` as if `from` sent it, bypassing the queue (violation tests).
  Status Inject(ActorId from, ActorId to, const OutgoingMessage& message);

  const std::vector<std::string>& transcript() const { return transcript_; }
  // The transcript since the last call.
  std::vector<std::string> TakeTranscript();
  ActorProtocol& protocol(const std::string& actor);
  ActorId id(const std::string& actor) const;
  const std::vector<ActorDescription>& actors() const { return actors_; }
  bool AllFinished() const;
  int pending_messages() const { return static_cast<int>(queue_.size()); }

 private:
  struct Envelope {
    ActorId from = -1;
    OutgoingMessage message;
  };

  // Sends what `outbox` holds, runs its launch (completing it at once when asked), repeats.
  Status Handle(ActorId actor, Outbox* outbox);
  Status Deliver(const Envelope& envelope, Outbox* outbox);
  std::string Describe(ActorId from, const OutgoingMessage& message) const;
  void Record(std::string line);

  Options options_;
  std::vector<ActorDescription> actors_;
  std::vector<std::unique_ptr<ActorProtocol>> protocols_;
  std::map<RegisterId, std::string> register_names_;
  std::vector<Envelope> queue_;  // In send order.
  // Per actor: the firings awaiting completion, in launch order.
  std::vector<std::vector<int64_t>> running_;
  std::vector<std::string> transcript_;
  size_t taken_ = 0;
  std::mt19937_64 random_;
};

}  // namespace testing
}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_TESTING_PROTOCOL_TEST_HOST_H_
