// What each unfinished actor waits for, in words and as data: the stall watchdog's report,
// and the answer of live diagnosis (`kill -USR1`, the gRPC Diagnostics service), in one format:
//
//   actor 'consumer' (compute) on node0/cpu:0 at firing 2 (piece 2): starved: needs fill 2
//     (piece 2) of register 'x' from actor 'producer'
//   actor 'producer' (source) on node0/cpu:0 at firing 4 (piece 4): blocked: no free slot in
//     register 'x'; fill 2 (piece 2) is still held by actor 'consumer'
//   actor 'slow' (compute) on node0/cpu:1 at firing 7 (piece 7): running: its kernel is
//     running or queued on its device
//
// (one line each). A firing or fill covering several pieces shows them as "pieces 8..11".
#ifndef SOFTWIRE_RUNTIME_HOST_STALL_REPORT_H_
#define SOFTWIRE_RUNTIME_HOST_STALL_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "proto/plan.pb.h"
#include "runtime/host/host_messages.h"

namespace softwire {
namespace runtime {

// One actor's wait state with every id resolved to a name.
struct ActorWaitState {
  int64_t actor = -1;
  std::string actor_name;
  std::string kind;    // "compute", ...
  std::string device;  // "node0/cpu:0".
  std::string node;    // "node0".
  // False when the actor did not answer in time (busy in a kernel, or its thread blocked).
  bool answered = true;
  int32_t state = 0;  // actors::WaitState::Kind, when answered.
  int64_t next_firing = 0;
  int64_t completed_firings = 0;
  int64_t register_id = -1;  // Starved, blocked or draining: the register.
  std::string register_name;
  int64_t sequence = -1;  // The fill waited for (starved) or still held (blocked).
  // Starved: the producer; blocked/draining: the consumers holding the fill.
  std::vector<int64_t> waiting_on;
  std::vector<std::string> waiting_on_names;
  std::string line;  // The report's line for this actor.
};

// The wait states of a job's unfinished actors.
struct JobWaitStates {
  std::string job_name;
  double elapsed_seconds = 0;  // Since the actors started.
  int64_t completed_firings = 0;
  int64_t actors = 0;
  int64_t unfinished = 0;
  std::vector<ActorWaitState> waits;  // Unfinished actors, plan order.

  // The lines of at most `max_lines` actors (then "... and N more"), each indented by two
  // spaces and preceded by a newline.
  std::string Lines(int max_lines) const;
  // "wait states of job 'tiny' after 1.52 s: 3 of 4 actors have not finished, 1200 firings
  // completed:" and the lines.
  std::string Text(int max_lines) const;
};

// One actor's answer, resolved against `plan` (ids it does not know print as numbers).
ActorWaitState DescribeActorWait(const proto::Plan& plan, const WaitReport& report);
// An actor that did not answer.
ActorWaitState DescribeSilentActor(const proto::Plan& plan, int64_t actor,
                                   int64_t completed_firings);
// The report's line for one actor's answer.
std::string DescribeWaitReport(const proto::Plan& plan, const WaitReport& report);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_STALL_REPORT_H_
