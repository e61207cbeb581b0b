// ActorTracer: records one hosted actor's firings (trace/trace_event.h) into its own
// TraceWriter: when each launched, when its kernel ran, and what let it launch.
//
// The HostActor calls it only when the job is traced (its pointer is null otherwise), from its
// own handlers, one at a time, so the writer needs no lock. It reads no clock itself except
// for a launch its queue deferred: the queue stamps kernel start and end into the FiringTimes
// that BeforeLaunch hands out. Readies and Releases are not recorded: they leave when the
// firing that sends them ends, so the analysis (trace/trace_model.h) derives them from the
// firings.
//
// Cause: the message whose handling launched a firing is what let it launch (a Ready: its
// input; a Release: its slot); a launch from a completion is caused by that previous firing;
// firing 0 of an actor that needs nothing is caused by the start. The host hands the message
// over at the launch, so tracing costs nothing per message.
//
// Step window: only the firings of the recorded steps are recorded, and only theirs are
// stamped: outside the window a firing costs its actor two comparisons and reads no clock.
#ifndef SOFTWIRE_RUNTIME_HOST_ACTOR_TRACER_H_
#define SOFTWIRE_RUNTIME_HOST_ACTOR_TRACER_H_

#include <cstdint>
#include <limits>
#include <memory>

#include "actors/actor_protocol.h"
#include "runtime/device/device_queue.h"
#include "runtime/host/host_messages.h"
#include "trace/trace_event.h"
#include "trace/trace_recorder.h"

namespace softwire {
namespace runtime {

class ActorTracer {
 public:
  // `writer` and `description` are borrowed and outlive the tracer.
  ActorTracer(trace::TraceWriter* writer, const actors::ActorDescription* description,
              int64_t pieces_per_step, const trace::StepWindow& window);

  // The protocol launched `firing`; the queue is about to run it. `message` is the Ready or
  // Release whose handling launched it, or null when the start or a completion did. Returns
  // where the queue is to stamp the kernel's times for a firing the trace records, or null for
  // one outside the step window or past the trace's cap (its queue then reads no clock).
  //
  // The firing's record is kept in the tracer's ring (one per firing in flight, firing i at
  // i % max_in_flight) with its cause written now; the times follow at the completion, which
  // copies it into the trace (a firing that fails is not kept).
  FiringTimes* BeforeLaunch(int64_t firing, const actors::ProtocolMessage* message);
  // The queue ran it inline (it launched when it started) or deferred it (it launched now).
  // Both only for a firing BeforeLaunch handed times for.
  void LaunchRanInline() {
    launching_->launch = launching_->times.start.load(std::memory_order_relaxed);
  }
  void LaunchDeferred();

  // The firing completed successfully: keeps its record. A launch that follows is caused by it.
  void FiringCompleted(int64_t firing) {
    Pending& pending = ring_[static_cast<size_t>(firing % ring_size_)];
    if (pending.firing == firing && pending.in_window) Keep(&pending);
    pending.firing = -1;
    previous_ = firing;
  }

 private:
  // One firing in flight: its record (cause written), where its queue stamps its times, and
  // when it launched.
  struct Pending {
    trace::TraceEvent event;
    FiringTimes times;
    int64_t launch = -1;
    int64_t firing = -1;     // -1: none.
    bool in_window = false;  // In the step window.
    bool recorded = false;   // And the trace had room at its launch.
  };

  // Writes the firing's times into its record and commits it to the trace (counts it dropped
  // when the trace had no room).
  void Keep(Pending* pending);

  trace::TraceWriter* const writer_;
  const int32_t id_;
  int64_t first_firing_ = 0;  // Firings [first_firing_, end_firing_) are recorded.
  int64_t end_firing_ = std::numeric_limits<int64_t>::max();
  const int64_t ring_size_;          // The actor's max_in_flight.
  std::unique_ptr<Pending[]> ring_;  // Firing i at i % ring_size_.
  Pending* launching_ = nullptr;     // The firing last launched.
  int64_t previous_ = -1;            // The last completed firing; -1 before the first.
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_ACTOR_TRACER_H_
