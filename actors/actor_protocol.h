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
//   protocol.Start(&outbox);                        // A source may launch firing 0 here.
//   Send(outbox.messages); if (outbox.launch) RunKernel(*outbox.launch);
//   ... for each message the actor receives:
//   outbox.clear();
//   Status status = protocol.OnReady(producer, ready, &outbox);  // Or OnRelease, ...
//   ... when the kernel of firing `index` completed:
//   outbox.clear();
//   status = protocol.OnFiringDone(index, &outbox);  // Releases, Readies, maybe a launch.
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
#include <utility>
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
  int64_t index = 0;                 // 0 .. firings-1.
  int64_t first_piece = 0;           // index * period.
  std::vector<SlotBinding> inputs;   // In input order.
  std::vector<SlotBinding> outputs;  // In output order.
  // Per output: true when this firing begins the fill (accumulate: overwrite, not add).
  std::vector<bool> output_fill_begins;
};

// A message to send: the protocol sets `to`, the type and its fields; the host stamps `job`
// and `from` (they are the same for every message of one actor).
using OutgoingMessage = ProtocolMessage;

// What the protocol asks the host to do after one call. Hosts clear() and reuse it; then no
// call allocates after warm-up: `messages` keeps its capacity, and clear() keeps the vectors of
// the last `launch` for the next one. A host that must keep a Firing past the next clear() (an
// asynchronous kernel) swaps it out: `std::swap(running_firing, *outbox.launch)`, which hands
// the outbox the previous firing's vectors to reuse.
//
// Stream-ordered edges (MarkStreamOrderedEdges, actors/stream_ordered_edges.h): when the
// description carries marks, a launching firing may send Readies and Releases itself, in the
// same Outbox as `launch`. A host that marks edges must enqueue `launch`'s kernel on its
// device queue before it sends any of `messages`; without marks the order does not matter.
struct Outbox {
  std::vector<OutgoingMessage> messages;  // Send in this order (after enqueuing `launch`).
  // Run this firing's kernel, then call OnFiringDone. At most one per call; an actor with
  // max_in_flight > 1 may have more ready: after taking this one, call LaunchAnother.
  std::optional<Firing> launch;
  bool finished = false;  // The actor just finished (see docs/PROTOCOL.md).

  void clear() {
    messages.clear();
    if (launch) {
      spare_firing_ = std::move(*launch);
      launch.reset();
    }
    finished = false;
  }

  // For ActorProtocol: sets `launch` to an empty Firing built from the recycled vectors.
  Firing& BeginLaunch() {
    if (!launch) launch.emplace(std::move(spare_firing_));
    launch->inputs.clear();
    launch->outputs.clear();
    launch->output_fill_begins.clear();
    return *launch;
  }

 private:
  Firing spare_firing_;
};

// Why an actor is not running a firing right now.
struct WaitState {
  enum class Kind {
    kRunning,   // A firing is in flight (next_firing: the oldest in flight).
    kStarved,   // Waiting for an input fill.
    kBlocked,   // Waiting for a free slot of an output.
    kDraining,  // All firings done; waiting for slots to come back or EndOfStream.
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

  // Called once, normally before any message (messages that come earlier are recorded).
  // Launches firing 0 when it needs no input.
  void Start(Outbox* outbox);

  // A message from actor `from`. Errors are protocol violations (InvalidArgument naming this
  // actor and the register); the host fails the job. After an error the state is undefined.
  Status OnReady(ActorId from, const Ready& ready, Outbox* outbox);
  Status OnRelease(ActorId from, const Release& release, Outbox* outbox);
  Status OnEndOfStream(ActorId from, const EndOfStream& end_of_stream, Outbox* outbox);

  // The kernel of firing `index` (one in flight) completed. Completions take effect in launch
  // order (docs/PROTOCOL.md, "Several firings in flight"): when `index` is the oldest in
  // flight, it (and every later one whose completion already came) sends the Releases of the
  // fills no later firing needs, then the Readies of the fills it completed, then (after the
  // last firing) EndOfStream; an earlier one still in flight holds it back. May launch the
  // next firing. Internal error when `index` is not in flight or already completed (a host
  // bug). With max_in_flight 1 the firing in flight is the one last launched.
  Status OnFiringDone(int64_t index, Outbox* outbox);

  // After the host took `outbox->launch` (cleared the outbox): launches the next firing too,
  // when fewer than max_in_flight are in flight and it has its fills and slots. A host of an
  // actor with max_in_flight > 1 calls it until it launches nothing; at 1 it never launches
  // (the firing just taken is in flight). CHECK-fails when `outbox` still holds a launch.
  void LaunchAnother(Outbox* outbox);

  // All firings completed, every slot of every output came back, every input ended.
  bool finished() const;
  int64_t completed_firings() const;
  // Firings launched; launched_firings() - completed_firings() are in flight.
  int64_t launched_firings() const;
  // Slots of output `output_index` in use: begun (being written, or filled) and not yet
  // released by every consumer. Never exceeds the register's slots. For traces.
  int occupied_slots(int output_index) const;
  // What the actor waits for now. Starved is reported before blocked when both hold (the
  // first input lacking its fill, in input order; else the first output without a free slot).
  // Draining names the first output with slots still out (and its holders), else the first
  // input whose EndOfStream has not come (and its producer). Allocates: not for the hot path.
  WaitState DescribeWait() const;
  const ActorDescription& description() const;

 private:
  class State;
  std::unique_ptr<State> state_;
};

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_ACTOR_PROTOCOL_H_
