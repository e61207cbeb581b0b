// CriticalPath: the chain of firings, and the waits between them, that set how long a stretch
// of a trace took (the summary asks for the steady steps': trace_summary.h).
//
// Contract:
//   - FindCriticalPath(model, from, to) ends the path at the firing that ended last among those
//     that end within (from, to], and walks backwards, each firing to its predecessor: what let
//     it start. When it started after it could launch (it waited for its device queue), the
//     firing its queue ran before it (link kQueue); else whichever ended last of the firing that
//     sent its recorded cause (the producer that completed the input fill, kInput; the consumer
//     that released the slot, kSlot) and its own previous firing (kPrevious: a message that sat
//     in the mailbox while the actor was busy held nothing up; on a tie, the cause). Only a
//     predecessor that ended no later than the firing started counts. The walk stops at a
//     firing with no recorded predecessor, or whose predecessor ended at or before `from`.
//   - When every firing starts as soon as the last of its dependencies ended (an engine that
//     does not idle), following the last-arriving dependency back is the longest path through
//     the firings weighted by their time: the path's length, busy plus waits, is the stretch's.
//   - Times are clipped to [from, to]: a firing that straddles `from` counts its part after it.
//     busy_ns + wait_ns == end - begin, where begin is max(from, first firing's start).
//   - Pure and thread-compatible; O(firings log firings).
#ifndef SOFTWIRE_TRACE_CRITICAL_PATH_H_
#define SOFTWIRE_TRACE_CRITICAL_PATH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace/trace_model.h"

namespace softwire {
namespace trace {

// How a firing on the path depends on the one before it.
enum class PathLink : uint8_t {
  kFirst = 0,     // The path's first firing.
  kInput = 1,     // It read a fill the previous firing completed.
  kSlot = 2,      // It wrote into a slot the previous firing released.
  kQueue = 3,     // Its device queue was running the previous firing.
  kPrevious = 4,  // The previous firing was its own.
};
const char* PathLinkName(PathLink link);  // "first", "input", "slot", "queue", "previous".

struct PathFiring {
  size_t firing = 0;  // Index into model.firings.
  PathLink link = PathLink::kFirst;
  TimeNs wait_ns = 0;  // From the previous firing's end (or `from`) to its start.
};

// One actor's part of the path: all its firings on it, wherever they lie.
struct PathActorShare {
  int32_t actor = 0;
  int64_t firings = 0;
  TimeNs busy_ns = 0;  // Its kernel time on the path (clipped).
  double share = 0;    // busy_ns over the path's length.
};

struct CriticalPath {
  std::vector<PathFiring> firings;     // Earliest first; empty when no firing ends in the window.
  TimeNs begin = 0;                    // max(from, first firing's start).
  TimeNs end = 0;                      // The last firing's end.
  TimeNs busy_ns = 0;                  // Kernel time on the path.
  TimeNs wait_ns = 0;                  // Time between its firings (messages, scheduling).
  std::vector<PathActorShare> actors;  // Most kernel time first (ties: plan order).

  TimeNs length_ns() const { return end - begin; }
};

CriticalPath FindCriticalPath(const TraceModel& model, TimeNs from, TimeNs to);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_CRITICAL_PATH_H_
