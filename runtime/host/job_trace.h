// JobTrace: the trace of one traced job: the job-wide TraceRecorder (trace/trace_recorder.h)
// and one ActorTracer per hosted actor, each with its own writer.
//
//   StatusOr<std::unique_ptr<JobTrace>> trace = JobTrace::Create(plan, descriptions, options);
//   ... give actor i (*trace)->tracer(i); call Started() when the actors start ...
//   ... after every actor terminated and the threads were joined:
//   trace::TraceLog log = (*trace)->TakeLog("ok");
//
// Threading: tracer(i) is used by actor i's handlers only; Create, Started and TakeLog by the
// job's thread, TakeLog after the actors are gone.
#ifndef SOFTWIRE_RUNTIME_HOST_JOB_TRACE_H_
#define SOFTWIRE_RUNTIME_HOST_JOB_TRACE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "base/status.h"
#include "proto/plan.pb.h"
#include "runtime/device/trace_clock.h"
#include "runtime/host/actor_tracer.h"
#include "trace/trace_model.h"
#include "trace/trace_recorder.h"

namespace softwire {
namespace runtime {

// Whether and how a job is traced (RunOptions::trace).
struct TraceOptions {
  bool enabled = false;
  // Raw events the whole job may record; later ones are dropped and counted.
  int64_t event_cap = trace::kDefaultEventCap;
  // Steps recorded (all by default).
  trace::StepWindow steps;
};

class JobTrace {
 public:
  // `plan` and `descriptions` are borrowed and outlive the trace.
  static StatusOr<std::unique_ptr<JobTrace>> Create(
      const proto::Plan& plan, const std::vector<actors::ActorDescription>& descriptions,
      const TraceOptions& options);

  ActorTracer* tracer(int64_t actor) { return tracers_[static_cast<size_t>(actor)].get(); }
  // The actors start now: the trace's zero, and the first reading that turns the recorded
  // TraceClock ticks into CLOCK_MONOTONIC nanoseconds.
  void Started();
  // Everything recorded, with the plan's facts; `outcome` is "ok" or how the run failed.
  trace::TraceLog TakeLog(const std::string& outcome);

 private:
  JobTrace(const proto::Plan& plan, const TraceOptions& options);

  const proto::Plan& plan_;
  const TraceOptions options_;
  std::unique_ptr<trace::TraceRecorder> recorder_;
  std::vector<std::unique_ptr<ActorTracer>> tracers_;
  TickCalibration calibration_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_JOB_TRACE_H_
