// TraceEvent: what an engine records while a plan runs, one fixed-size record per firing.
//
// An engine records only what it cannot know afterwards: for every firing, when the protocol
// let it launch, when its kernel started and ended on its device queue, and what let it launch
// (its cause). Everything else in a trace file follows from these and the plan by the rules of
// docs/PROTOCOL.md, and BuildTraceModel (trace_model.h) derives it once, for every engine: a
// firing sends its Releases and Readies when it ends (so the end of the producer's completing
// firing is when a fill was handed over, and the end of a consumer's last firing reading a
// fill is when it gave the fill back); hence the starved/blocked intervals, the slot
// occupancy, the flow arrows.
// One event per firing keeps recording to two clock reads and one 56-byte store.
//
// Timestamps are nanoseconds on the engine's clock (a monotonic clock, or virtual time); the
// engine supplies them, so this header knows no clock. Records are trivially copyable and are
// written into pre-claimed memory (trace_recorder.h): recording never allocates.
#ifndef SOFTWIRE_TRACE_TRACE_EVENT_H_
#define SOFTWIRE_TRACE_TRACE_EVENT_H_

#include <cstdint>
#include <type_traits>

namespace softwire {
namespace trace {

// Nanoseconds on the engine's clock.
using TimeNs = int64_t;

enum class EventType : uint8_t {
  kFiring = 1,  // A kernel ran.
};

// What let a firing launch: the last message the actor handled before it launched.
enum class CauseKind : uint8_t {
  kNone = 0,            // Unknown (not recorded).
  kStart = 1,           // The actor started and needed nothing (a source's first firing).
  kInput = 2,           // A Ready: fill `sequence` of input `register_id` arrived from `peer`.
  kSlot = 3,            // A Release: `peer` gave back fill `sequence` of output `register_id`.
  kPreviousFiring = 4,  // The actor's own previous firing (`sequence`) completed.
};

// One firing. `launch <= start <= end`; a firing whose queue was busy waits between launch and
// start.
struct TraceEvent {
  TimeNs launch;        // The protocol let it launch.
  TimeNs start;         // Its kernel started on its device queue.
  TimeNs end;           // Its kernel ended; its Releases and Readies leave now.
  int64_t index;        // Firing index.
  int64_t sequence;     // Cause: the fill (input, slot) or the previous firing.
  int32_t actor;        // The actor.
  int32_t peer;         // Cause: the sender (input, slot) or the actor itself.
  int32_t register_id;  // Cause: the register (input, slot), else -1.
  EventType type;
  CauseKind cause;
  uint8_t padding[2];
};

static_assert(std::is_trivially_copyable<TraceEvent>::value, "recorded by plain stores");
static_assert(sizeof(TraceEvent) == 56, "seven words per firing");

inline TraceEvent FiringEvent(int32_t actor, int64_t firing, TimeNs launch, TimeNs start,
                              TimeNs end, CauseKind cause, int32_t cause_actor,
                              int32_t cause_register, int64_t cause_sequence) {
  TraceEvent event{};
  event.type = EventType::kFiring;
  event.actor = actor;
  event.index = firing;
  event.launch = launch;
  event.start = start;
  event.end = end;
  event.cause = cause;
  event.peer = cause_actor;
  event.register_id = cause_register;
  event.sequence = cause_sequence;
  return event;
}

// "input", "slot", ...
const char* CauseKindName(CauseKind kind);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_TRACE_EVENT_H_
