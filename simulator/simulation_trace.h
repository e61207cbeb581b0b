// SimulationTrace: the actor trace of a simulated run, in trace/'s model (docs/TRACING.md), so
// `softwire simulate --trace FILE` writes the same Chrome-format file as `softwire run` and
// `softwire trace summary` reads either.
//
//   StatusOr<std::unique_ptr<SimulationTrace>> trace = SimulationTrace::Create(cap);
//   options.trace_writer = (*trace)->writer();          // SimulationOptions
//   ... Simulate(plan, options) ...
//   trace::TraceLog log = (*trace)->TakeLog(plan, steps, options.trace_steps, "ok");
//
// The simulator records one trace::TraceEvent per firing: launch (when the protocol let it
// launch), start and end (its kernel on its device queue) in virtual nanoseconds from 0, and
// its cause (the message, start or previous firing that let it launch). One writer serves the
// whole run, which is single-threaded.
#ifndef SOFTWIRE_SIMULATOR_SIMULATION_TRACE_H_
#define SOFTWIRE_SIMULATOR_SIMULATION_TRACE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "proto/plan.pb.h"
#include "trace/trace_model.h"
#include "trace/trace_recorder.h"

namespace softwire {
namespace simulator {

class SimulationTrace {
 public:
  // Room for `event_cap` firings (trace::kDefaultEventCap by default); later ones are counted
  // as dropped. ResourceExhausted when the address space cannot be reserved.
  static StatusOr<std::unique_ptr<SimulationTrace>> Create(
      int64_t event_cap = trace::kDefaultEventCap);

  trace::TraceWriter* writer() { return recorder_->writer(0); }

  // Everything recorded, with the plan's facts for a run of `steps` steps (the steps override,
  // if any). `outcome` is "ok" or how the run failed.
  trace::TraceLog TakeLog(const proto::Plan& plan, int64_t steps, const trace::StepWindow& window,
                          const std::string& outcome);

 private:
  explicit SimulationTrace(std::unique_ptr<trace::TraceRecorder> recorder)
      : recorder_(std::move(recorder)) {}

  std::unique_ptr<trace::TraceRecorder> recorder_;
};

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_SIMULATION_TRACE_H_
