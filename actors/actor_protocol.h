// ActorProtocol: the register/slot protocol of one actor as a pure state machine.
//
// No threads, no clocks, no CAF. A host (the CAF runtime, the simulator, a test) feeds it the
// messages the actor receives and the completions of the kernels it launched; it answers with
// the messages to send and the firing to launch, in an Outbox. docs/PROTOCOL.md is the
// specification; this class implements it exactly, so the runtime, the simulator and the
// deterministic tests all run the same code.
//
//   ActorProtocol protocol(&description);
//   Outbox outbox;
//   protocol.Start(&outbox);                       // A source may launch firing 0 here.
//   ... host delivers messages ...
//   Status status = protocol.OnReady(producer, ready, &outbox);
//   if (outbox.launch) RunKernel(*outbox.launch); // then:
//   protocol.OnFiringDone(outbox.launch->index, &outbox);
//
// Threading: not thread-safe; one host thread at a time per instance (a CAF actor's handler).
// Ownership: `description` is borrowed and must outlive the protocol.
// Performance: after warm-up no call allocates when the host reuses its Outbox.
#ifndef SOFTWIRE_ACTORS_ACTOR_PROTOCOL_H_
#define SOFTWIRE_ACTORS_ACTOR_PROTOCOL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "actors/messages.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// One slot a firing reads or writes.
struct SlotBinding {
  RegisterId register_id = -1;
  int32_t slot = 0;
  int64_t sequence = 0;  // Fill number.
};

// A firing the host must run.
struct Firing {
  int64_t index = 0;                    // 0 .. firings-1.
  int64_t first_piece = 0;              // index * period.
  std::vector<SlotBinding> inputs;      // In input order.
  std::vector<SlotBinding> outputs;     // In output order.
  // Per output: true when this firing begins the fill (accumulate: overwrite, not add).
  std::vector<bool> output_fill_begins;
};

// A message to send.
struct OutgoingMessage {
  enum class Type { kReady, kRelease, kEndOfStream };
  Type type = Type::kReady;
  ActorId to = -1;
  Ready ready;              // When type == kReady.
  Release release;          // When type == kRelease.
  EndOfStream end_of_stream;  // When type == kEndOfStream.
};

// What the protocol asks the host to do after one call. Hosts clear() and reuse it.
struct Outbox {
  std::vector<OutgoingMessage> messages;  // Send in this order.
  std::optional<Firing> launch;           // Run this firing's kernel, then call OnFiringDone.
  bool finished = false;                  // The actor just finished (see docs/PROTOCOL.md).

  void clear() {
    messages.clear();
    launch.reset();
    finished = false;
  }
};

// Why an actor is not running a firing right now.
struct WaitState {
  enum class Kind {
    kRunning,          // A firing is in flight.
    kStarved,          // Waiting for an input fill.
    kBlocked,          // Waiting for a free slot of an output.
    kDraining,         // All firings done; waiting for slots to come back or EndOfStream.
    kFinished,
  };
  Kind kind = Kind::kStarved;
  int64_t next_firing = 0;
  RegisterId register_id = -1;  // The register waited on (starved/blocked).
  int64_t sequence = -1;        // The fill waited for (starved) or held (blocked).
  // Starved: the producer. Blocked: the consumers still holding the oldest fill.
  std::vector<ActorId> waiting_on;
};

const char* WaitKindName(WaitState::Kind kind);

class ActorProtocol {
 public:
  explicit ActorProtocol(const ActorDescription* description);
  ~ActorProtocol();
  ActorProtocol(const ActorProtocol&) = delete;
  ActorProtocol& operator=(const ActorProtocol&) = delete;

  // Called once before any message. Launches firing 0 when it needs no input.
  void Start(Outbox* outbox);

  // A message from actor `from`. Errors are protocol violations; the host fails the job.
  Status OnReady(ActorId from, const Ready& ready, Outbox* outbox);
  Status OnRelease(ActorId from, const Release& release, Outbox* outbox);
  Status OnEndOfStream(ActorId from, const EndOfStream& end_of_stream, Outbox* outbox);

  // The kernel of firing `index` (the one last launched) completed.
  Status OnFiringDone(int64_t index, Outbox* outbox);

  bool finished() const;
  int64_t completed_firings() const;
  // Filled slots of output `output_index` not yet released by every consumer (for traces).
  int occupied_slots(int output_index) const;
  WaitState DescribeWait() const;
  const ActorDescription& description() const;

 private:
  class State;
  std::unique_ptr<State> state_;
};

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_ACTOR_PROTOCOL_H_
