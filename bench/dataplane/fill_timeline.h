// FillTimeline: where one traced transfer's fills spent their time, from the firings of both
// node processes (their trace events; both read CLOCK_MONOTONIC, one host, so their times
// compare). For the plan of data_plane_bench (source -> send -> wire -> recv -> sink):
//   - the send's firings: why each launched (its input arrived, a wire slot came back from the
//     receiver's Release, its own previous firing completed), how long its bytes took to go out
//     (start to end), and the gap from one firing's end to the next's start;
//   - the recv's firings: the Ready's way across (send end to recv launch) and the period
//     between fills.
// Medians and counts, not one wall time: counts do not move with the machine's load.
//
// Threading: plain functions on values.
#ifndef SOFTWIRE_BENCH_DATAPLANE_FILL_TIMELINE_H_
#define SOFTWIRE_BENCH_DATAPLANE_FILL_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trace/trace_event.h"

namespace softwire {
namespace bench {

// One line per firing, for a child to hand its events to the parent over a pipe.
std::string FiringLine(const trace::TraceEvent& event);
// The event of a FiringLine; CHECK-fails on a line of another form.
trace::TraceEvent ParseFiringLine(const std::string& line);

struct FillTimeline {
  int64_t fills = 0;
  // Why the send's firings launched (CauseKind): counts.
  int64_t send_after_input = 0;     // The source's fill arrived.
  int64_t send_after_release = 0;   // A wire slot came back (the receiver's Release).
  int64_t send_after_previous = 0;  // Its own previous firing completed.
  double send_write_us = 0;         // Median start -> end: the bytes going out.
  double send_gap_us = 0;           // Median end of firing i -> start of firing i+1.
  double send_period_us = 0;        // Median start i -> start i+1.
  double ready_transit_us = 0;      // Median send end i -> recv launch i.
  double recv_period_us = 0;        // Median recv start i -> start i+1.
  // CPU (user + system, every thread) per fill of each process over the run: unlike wall
  // time, it moves little with other tenants' load. Set by the caller.
  double sender_cpu_us = 0;
  double receiver_cpu_us = 0;
  // Context switches per fill of each process (threads put to sleep and woken, or preempted).
  double sender_switches = 0;
  double receiver_switches = 0;
};

// `sender` and `receiver`: the two processes' firing events; `send` and `recv`: the actors.
FillTimeline AnalyseFills(const std::vector<trace::TraceEvent>& sender,
                          const std::vector<trace::TraceEvent>& receiver, int32_t send,
                          int32_t recv);

// One line: "fills N; send launched after input/release/previous a/b/c; write W us, gap G us,
// period P us; Ready across R us; recv period Q us".
std::string Describe(const FillTimeline& timeline);

}  // namespace bench
}  // namespace softwire

#endif  // SOFTWIRE_BENCH_DATAPLANE_FILL_TIMELINE_H_
