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
  // The firing's record is reserved and its cause written now, straight into the trace: the
  // times follow at the completion, which keeps it (a firing that fails is not kept).
  FiringTimes* BeforeLaunch(int64_t firing, const actors::ProtocolMessage* message) {
    launching_ = firing;
    if (firing < first_firing_ || firing >= end_firing_) return nullptr;
    event_ = writer_->Reserve();
    if (event_ == nullptr) return nullptr;
    event_->index = firing;
    event_->actor = id_;
    event_->type = trace::EventType::kFiring;
    if (message == nullptr) {
      // The start (no firing completed yet) or the previous firing's completion.
      event_->cause = previous_ < 0 ? trace::CauseKind::kStart : trace::CauseKind::kPreviousFiring;
      event_->peer = previous_ < 0 ? -1 : id_;
      event_->register_id = -1;
      event_->sequence = previous_;
    } else {
      event_->cause = message->type == actors::MessageType::kReady ? trace::CauseKind::kInput
                                                                   : trace::CauseKind::kSlot;
      event_->peer = static_cast<int32_t>(message->from);
      event_->register_id = static_cast<int32_t>(message->register_id);
      event_->sequence = message->sequence;
    }
    // Only `end` is reset: a queue that does not stamp leaves end < 0 (or below a stale start),
    // which Keep takes as "not stamped".
    times_.end.store(-1, std::memory_order_relaxed);
    return &times_;
  }
  // The queue ran it inline (it launched when it started) or deferred it (it launched now).
  // Both only for a firing BeforeLaunch handed times for.
  void LaunchRanInline() { launch_ = times_.start.load(std::memory_order_relaxed); }
  void LaunchDeferred();

  // The firing completed successfully: keeps its record. A launch that follows is caused by it.
  void FiringCompleted(int64_t firing) {
    if (firing == launching_ && firing >= first_firing_ && firing < end_firing_) Keep();
    previous_ = firing;
  }

 private:
  // Writes the launched firing's times into its record and commits it.
  void Keep();

  trace::TraceWriter* const writer_;
  const int32_t id_;
  int64_t first_firing_ = 0;  // Firings [first_firing_, end_firing_) are recorded.
  int64_t end_firing_ = std::numeric_limits<int64_t>::max();
  FiringTimes times_;
  trace::TraceEvent* event_ = nullptr;  // The launched firing's record, cause written.
  int64_t launching_ = -1;
  int64_t launch_ = -1;
  int64_t previous_ = -1;  // The last completed firing; -1 before the first.
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_ACTOR_TRACER_H_
