// The trace file: Chrome Trace Event Format, JSON object form, which Perfetto and
// chrome://tracing open. docs/TRACING.md describes the layout; in short:
//
//   pid 1..D        one process per device ("node0/cpu:0"), one thread per device queue
//                   ("queue 0 (compute)", a cpu device's "queue 0 (compute, threads
//                   sw:cpu0/k*)"; a cpu device's sends on a track of their own, tid 100 +
//                   queue, as their transfers overlap the strand's kernels); an X event per
//                   firing, named after the actor, args:
//                   actor, kind, op, firing, piece, step, reads, writes, queued_us, cause...
//                   C events "slots <register>" {occupied} for each register on the device
//   pid D+1         "actors": one thread per actor, X events "starved" / "blocked" / "queued"
//                   with args register, sequence (the fill), waiting_on (actor ids and names)
//   s / f           one flow per Ready, from the producer's firing to the consumer's, both
//                   bound to the enclosing slices (f has "bp":"e")
//   otherData       format "softwire-trace/1", job, engine, clock, steps, pieces_per_step,
//                   event cap, events recorded and dropped, step window, clock offsets,
//                   outcome, and "plan": the PlanFacts the summary needs
//
// What the writer guarantees (chrome_trace_check.h checks it): every X has ts and dur >= 0;
// slices on one thread never partly overlap (an engine whose clock let two slices overlap gets
// the later one shortened, counted in otherData.adjusted_slices); every flow has both ends,
// each inside a slice of its thread; timestamps are microseconds with three decimals.
//
// ReadChromeTrace reads such a file back into the TraceModel it was written from (times to the
// nanosecond), so `softwire trace summary` and `render` work from files alone.
#ifndef SOFTWIRE_TRACE_CHROME_TRACE_H_
#define SOFTWIRE_TRACE_CHROME_TRACE_H_

#include <string>

#include "base/status.h"
#include "trace/trace_model.h"

namespace softwire {
namespace trace {

// The file's text.
std::string ExportChromeTrace(const TraceModel& model);

// Writes the file atomically (a temporary beside `path`, then a rename): no reader ever sees a
// half-written trace, and a failure leaves an older file intact.
Status WriteChromeTrace(const std::string& path, const TraceModel& model);

// Parses a file written by ExportChromeTrace. DataLoss naming `source` (a path, for messages)
// and the position for text that is not JSON, not a softwire trace, or inconsistent.
StatusOr<TraceModel> ParseChromeTrace(const std::string& text, const std::string& source);

// Reads and parses `path`. NotFound / DataLoss naming the path.
StatusOr<TraceModel> ReadChromeTrace(const std::string& path);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_CHROME_TRACE_H_
