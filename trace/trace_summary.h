// TraceSummary: where the time went, from a TraceModel (a run just recorded, or a file read).
//
//   - utilization of each device: time some queue of it ran a kernel, over the trace's span,
//     and over the steady steps (every recorded step but the first, when there are several);
//   - each actor's shares of the span: busy, starved, blocked, queued;
//   - the critical path of the steady steps (critical_path.h): the chain of firings and the
//     waits between them that set the steady time, ending at the firing that ended last in it
//     and walking back to what let each firing start; each actor on it with its kernel time's
//     share of the path. The bottleneck is the actor with the most kernel time on the path;
//   - the pipeline bubble: the idle share of the devices within each steady step's span (from
//     its first firing's start to its last firing's end), beside (p-1)/(m+p-1) with p the
//     plan's stages and m its pieces per step. The idle share splits in two: the busiest
//     device's idle share (its wait for the pipeline to fill and drain: what the formula
//     counts, which assumes equal stages) and the imbalance (what the other devices idle
//     beyond it, having less work). The warm-up (the first recorded step, when others follow:
//     variables initialise, caches fill) is measured apart, the same way;
//   - memory high-water per device: the most register bytes in use at once (occupied slots x
//     bytes per slot, summed over the device's registers) plus workspaces and actor state,
//     beside the plan's planned bytes.
#ifndef SOFTWIRE_TRACE_TRACE_SUMMARY_H_
#define SOFTWIRE_TRACE_TRACE_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace_model.h"

namespace softwire {
namespace trace {

struct DeviceUsage {
  int32_t device = 0;
  double busy_seconds = 0;
  double utilization = 0;         // Busy over the span.
  double steady_utilization = 0;  // Busy over the steady steps' span.
};

struct ActorUsage {
  int32_t actor = 0;
  int64_t firings = 0;
  double busy_seconds = 0;
  // Shares of the trace's span.
  double busy = 0;
  double starved = 0;
  double blocked = 0;
  double queued = 0;
};

// Consecutive firings of one actor on the critical path.
struct PathSegment {
  int32_t actor = 0;
  int64_t first_firing = 0;
  int64_t firings = 0;
  double busy_seconds = 0;
};

// One actor's share of the critical path: all its firings on it, wherever they lie.
struct PathActor {
  int32_t actor = 0;
  int64_t firings = 0;
  double busy_seconds = 0;
  double share = 0;  // busy_seconds over path_seconds.
};

struct MemoryUsage {
  int32_t device = 0;
  int64_t register_high_water = 0;  // Most register bytes in use at once.
  int64_t fixed_bytes = 0;          // Workspaces and actor state of its actors.
  int64_t high_water = 0;           // The two together.
  int64_t planned_bytes = 0;
};

struct TraceSummary {
  double span_seconds = 0;
  int64_t firings = 0;
  int64_t first_step = 0;  // Steps with recorded firings: [first_step, end_step).
  int64_t end_step = 0;
  // The steady steps: [first_steady_step, end_steady_step). The first recorded step is left
  // out (warm-up) when there are two or more. When the trace recorded a window of a longer run
  // (`--trace-steps A:B`, three or more steps), the last is left out too, and the steady time
  // runs from the end of the first recorded step to the end of the last steady one: steps
  // overlap, and the unrecorded steps around the window would otherwise read as idle time.
  int64_t first_steady_step = 0;
  int64_t end_steady_step = 0;
  double steady_seconds = 0;
  TimeNs steady_begin = 0;  // The steady time, in the model's time: steady_seconds long.
  TimeNs steady_end = 0;

  std::vector<DeviceUsage> devices;  // Plan order.
  std::vector<ActorUsage> actors;    // Plan order.

  // The steady steps' critical path (empty when they have no firing).
  std::vector<size_t> critical_path;  // Indexes into model.firings, earliest first.
  std::vector<PathSegment> path_segments;
  std::vector<PathActor> path_actors;  // Most kernel time first (ties: plan order).
  double path_busy_seconds = 0;        // Kernel time on the path (within the steady time).
  double path_wait_seconds = 0;        // Time between its firings: busy + wait = path_seconds.
  double path_seconds = 0;  // From its first firing's start (or the steady time's, if later) to
                            // its last firing's end.
  int32_t bottleneck = -1;  // path_actors' first; -1: no firing.
  double bottleneck_seconds = 0;

  int stages = 1;
  int64_t pieces_per_step = 1;
  double bubble_formula = 0;    // (p-1)/(m+p-1).
  double bubble_measured = -1;  // Mean idle share within steady steps; -1 when no step.
  // bubble_measured = bubble_fill_drain + bubble_imbalance (see the file comment).
  double bubble_fill_drain = 0;
  double bubble_imbalance = 0;
  // The warm-up step apart (first_step, when steady steps follow it): -1 when none.
  double warmup_idle = -1;
  double warmup_fill_drain = 0;
  double warmup_imbalance = 0;

  std::vector<MemoryUsage> memory;  // Plan order.
};

TraceSummary Summarize(const TraceModel& model);

// Which actors' firings mark where a step begins (the summary's step spans and the pictures'
// step lines): the compute actors that read a variable, which cannot start a step before the
// previous step's updates (compute actors fed only by sources run steps ahead); else every
// compute actor; else every actor. Indexed by actor id.
std::vector<bool> StepStartingActors(const PlanFacts& plan);

// The summary as text, as `softwire trace summary` prints it.
std::string FormatSummary(const TraceModel& model, const TraceSummary& summary);

// "12.3 ms", "1.20 s", "850 us".
std::string FormatSeconds(double seconds);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_TRACE_SUMMARY_H_
