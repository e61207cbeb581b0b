// JobEvents: how one run of a hosted plan (an Execution) tells the outside what happens: its
// start, each completed step, and the watchdog's stall report. The CLI's progress lines, the
// RunPlan result and, later, a job service's event stream are implementations; none of them
// reads the runtime's bindings or counters.
//
// Threading: every call comes from the thread that runs the execution (Execution::Run), in
// order: OnStarted once, then OnStep in step order, then at most one OnStall. Calls must not
// block for long: the watchdog waits for them.
#ifndef SOFTWIRE_RUNTIME_HOST_JOB_EVENTS_H_
#define SOFTWIRE_RUNTIME_HOST_JOB_EVENTS_H_

#include <chrono>

#include "runtime/host/stall_report.h"
#include "runtime/host/step_collector.h"

namespace softwire {
namespace runtime {

class JobEvents {
 public:
  virtual ~JobEvents() = default;
  // The actors were started at `started_at`.
  virtual void OnStarted(std::chrono::steady_clock::time_point started_at) {}
  // Step `step.step` of this run completed (numbered from 0 in every run).
  virtual void OnStep(const CollectedStep& step) = 0;
  // No actor made progress for the stall timeout: what every unfinished actor waits for. The
  // run then fails with a DeadlineExceeded that carries the same report.
  virtual void OnStall(const JobWaitStates& states) {}
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_JOB_EVENTS_H_
