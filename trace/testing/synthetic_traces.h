// Trace logs with known answers, for the trace library's tests: what an ideal engine would
// record for small plans, computed in closed form (no threads, no clocks).
#ifndef SOFTWIRE_TRACE_TESTING_SYNTHETIC_TRACES_H_
#define SOFTWIRE_TRACE_TESTING_SYNTHETIC_TRACES_H_

#include <algorithm>
#include <string>
#include <vector>

#include "trace/trace_model.h"

namespace softwire {
namespace trace {
namespace testing {

// A chain of `stages` compute actors, stage s on device s, each firing taking `stage_ns[s]`;
// register h<s> (2 slots, 64 bytes) from stage s to stage s+1. Steps are separated by a
// barrier: step k's first firing of stage 0 starts when the last stage finished step k-1
// (as a training loop's variable/update cycle does). Within a step, piece j of stage s starts
// when stage s-1 finished it, stage s finished piece j-1 and a slot of h<s> came back. Causes
// are recorded as an engine would.
inline TraceLog BarrierPipeline(int stages, int64_t pieces_per_step, int64_t steps,
                                std::vector<TimeNs> stage_ns) {
  TraceLog log;
  PlanFacts& plan = log.plan;
  plan.job_name = "synthetic_pipeline";
  plan.steps = steps;
  plan.pieces_per_step = pieces_per_step;
  plan.micro_batch_size = 1;
  for (int s = 0; s < stages; ++s) {
    DeviceFacts device;
    device.name = "node0/sim:" + std::to_string(s);
    device.node = "node0";
    device.kind = "sim";
    device.planned_bytes = 4096;
    plan.devices.push_back(device);
    ActorFacts actor;
    actor.name = "stage" + std::to_string(s);
    actor.kind = "compute";
    actor.op_type = "sleep";
    actor.device = s;
    actor.stage = s;
    actor.period = 1;
    actor.firings = steps * pieces_per_step;
    if (s > 0) actor.inputs.push_back(s - 1);
    if (s + 1 < stages) actor.outputs.push_back(s);
    plan.actors.push_back(actor);
    if (s + 1 < stages) {
      RegisterFacts reg;
      reg.name = "h" + std::to_string(s);
      reg.producer = s;
      reg.device = s;
      reg.slots = 2;
      reg.bytes_per_slot = 64;
      reg.period = 1;
      reg.consumers.push_back(s + 1);
      plan.registers.push_back(reg);
    }
  }
  log.info.engine = "synthetic";
  log.info.clock = "virtual";
  log.info.event_cap = 1 << 20;

  const int64_t pieces = steps * pieces_per_step;
  // end[s][piece]
  std::vector<std::vector<TimeNs>> end(stages, std::vector<TimeNs>(pieces, 0));
  TimeNs barrier = 0;
  for (int64_t piece = 0; piece < pieces; ++piece) {
    if (piece % pieces_per_step == 0 && piece > 0) barrier = end[stages - 1][piece - 1];
    for (int s = 0; s < stages; ++s) {
      TimeNs ready_input = s > 0 ? end[s - 1][piece] : 0;
      TimeNs previous = piece > 0 ? end[s][piece - 1] : 0;
      // A slot of h<s> is free once stage s+1 released fill piece-2.
      TimeNs slot = (s + 1 < stages && piece >= 2) ? end[s + 1][piece - 2] : 0;
      TimeNs gate = (s == 0 && piece % pieces_per_step == 0) ? barrier : 0;
      TimeNs start = std::max({ready_input, previous, slot, gate});
      // The cause is the last thing the firing waited for. The barrier has no register in
      // this chain; it is recorded as the stage's previous firing.
      Cause cause;
      if (s == 0 && piece == 0) {
        cause.kind = CauseKind::kStart;
      } else if (s > 0 && start == ready_input) {
        cause = Cause{CauseKind::kInput, s - 1, s - 1, piece};
      } else if (s + 1 < stages && piece >= 2 && start == slot) {
        cause = Cause{CauseKind::kSlot, s + 1, s, piece - 2};
      } else {
        cause = Cause{CauseKind::kPreviousFiring, s, -1, piece - 1};
      }
      end[s][piece] = start + stage_ns[static_cast<size_t>(s)];
      TraceEvent firing = FiringEvent(s, piece, start, start, end[s][piece], cause.kind,
                                      cause.actor, cause.register_id, cause.sequence);
      log.events.push_back(firing);
    }
  }
  log.info.events_recorded = static_cast<int64_t>(log.events.size());
  return log;
}

}  // namespace testing
}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_TESTING_SYNTHETIC_TRACES_H_
