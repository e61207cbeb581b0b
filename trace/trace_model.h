// TraceLog and TraceModel: a recorded run, before and after analysis.
//
// A TraceLog is what an engine hands over: the plan's facts, how the recording was made, and
// the raw events of trace_event.h (one per firing). BuildTraceModel derives the rest by the
// rules of docs/PROTOCOL.md, knowing that a firing sends its Releases and Readies when it ends:
//   - firings, with their cause;
//   - for every actor, what it waited for between two firings, piece by piece of time:
//     starved (an input fill had not arrived: register, fill, producer), blocked (no free slot:
//     register, the fill still held, the consumers holding it), or queued (it could run, but its
//     device queue or its thread was busy);
//   - slot occupancy of every register over time (a fill takes a slot when the firing that
//     begins it launches, and gives it back when its last consumer released it);
//   - flows: one per Ready, from the producer's firing that completed the fill to the
//     consumer's first firing that read it.
// A TraceModel is also what the Chrome trace file holds, so reading a file (chrome_trace.h)
// gives the same model back, and the summary and the pictures work from either.
//
// Times in a model are nanoseconds since the trace's origin (the job's start).
#ifndef SOFTWIRE_TRACE_TRACE_MODEL_H_
#define SOFTWIRE_TRACE_TRACE_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trace/plan_facts.h"
#include "trace/trace_event.h"
#include "trace/trace_recorder.h"

namespace softwire {
namespace trace {

// A node's clock against the trace's clock: node time + offset_ns = trace time, within
// +-error_ns (clock_offset.h estimates it when a node joins).
struct NodeClockOffset {
  std::string node;
  int64_t offset_ns = 0;
  int64_t error_ns = 0;
};

// How a trace was recorded.
struct RecordingInfo {
  std::string engine;           // "caf-runtime", "simulator".
  std::string clock;            // "CLOCK_MONOTONIC", "virtual".
  TimeNs origin_ns = 0;         // Engine clock time of the trace's zero.
  int64_t event_cap = 0;        // Job-wide cap in force.
  int64_t events_recorded = 0;  // Raw events kept.
  int64_t events_dropped = 0;   // Raw events lost to the cap.
  StepWindow window;            // Steps recorded.
  std::vector<NodeClockOffset> clock_offsets;
  std::string outcome = "ok";  // "ok", or how the run failed.
};

// What an engine hands over after a run.
struct TraceLog {
  PlanFacts plan;
  RecordingInfo info;
  std::vector<TraceEvent> events;  // Any order; times on the engine's clock.
};

struct Cause {
  CauseKind kind = CauseKind::kNone;
  int32_t actor = -1;        // The sender (input, slot) or the actor itself (previous firing).
  int32_t register_id = -1;  // Input, slot.
  int64_t sequence = -1;     // The fill (input, slot) or the previous firing.
};

struct FiringRecord {
  int32_t actor = -1;
  int64_t firing = 0;
  TimeNs launch = 0;  // The protocol let it launch.
  TimeNs start = 0;   // Its kernel started on its device queue.
  TimeNs end = 0;
  Cause cause;
};

enum class WaitKind : uint8_t { kStarved = 0, kBlocked = 1, kQueued = 2 };
const char* WaitKindName(WaitKind kind);  // "starved", "blocked", "queued".

struct WaitRecord {
  int32_t actor = -1;
  int64_t firing = 0;  // The firing it waited to launch.
  WaitKind kind = WaitKind::kStarved;
  int32_t register_id = -1;         // Starved: the input; blocked: the output. -1 when queued.
  int64_t sequence = -1;            // Starved: the fill waited for; blocked: the fill still held.
  std::vector<int32_t> waiting_on;  // Starved: the producer; blocked: the holders.
  TimeNs start = 0;
  TimeNs end = 0;
};

// Slots of a register in use from `time` on.
struct CounterRecord {
  int32_t register_id = -1;
  TimeNs time = 0;
  int32_t occupied = 0;
};

struct FlowRecord {
  int32_t register_id = -1;
  int64_t sequence = 0;
  int32_t producer = -1;
  int64_t producer_firing = 0;
  int32_t consumer = -1;
  int64_t consumer_firing = 0;
  TimeNs sent = 0;  // When the Ready left: the end of the producer's firing (or, for a
                    // phase-1 consumer, of the last reader's).
};

struct TraceModel {
  PlanFacts plan;
  RecordingInfo info;
  std::vector<FiringRecord> firings;    // By start time.
  std::vector<WaitRecord> waits;        // By actor, then start time.
  std::vector<CounterRecord> counters;  // By time.
  std::vector<FlowRecord> flows;        // By send time.
  // Slices the exporter had to shorten so that slices on one thread nest (0 for a sane
  // engine; a clock that runs backwards across threads would make it > 0).
  int64_t adjusted_slices = 0;

  // First and last time of any firing or wait; 0 and 0 for an empty trace.
  TimeNs span_begin() const;
  TimeNs span_end() const;
  // The step of a firing (its first piece's).
  int64_t StepOf(const FiringRecord& firing) const;
  int64_t FirstPieceOf(const FiringRecord& firing) const;
};

// Derives the model from a log (see the file comment). InvalidArgument when the plan facts are
// inconsistent (CheckPlanFacts). Events naming actors the plan does not have are skipped. A log
// of a failed run gives a model of what happened until then. Times are moved to the log's
// origin (info.origin_ns). What depends on firings that were not recorded (outside the step
// window, past the cap) is left out: no flow without both ends, no wait measured from an
// unrecorded previous firing, and a fill whose Ready or Release is unknown counts as there.
StatusOr<TraceModel> BuildTraceModel(const TraceLog& log);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_TRACE_MODEL_H_
