#include "runtime/host/actor_tracer.h"

#include <algorithm>

#include "runtime/device/trace_clock.h"

namespace softwire {
namespace runtime {

ActorTracer::ActorTracer(trace::TraceWriter* writer, const actors::ActorDescription* description,
                         int64_t pieces_per_step, const trace::StepWindow& window)
    : writer_(writer),
      id_(static_cast<int32_t>(description->id)),
      ring_size_(std::max(1, description->max_in_flight)),
      ring_(std::make_unique<Pending[]>(static_cast<size_t>(ring_size_))) {
  if (window.all()) return;
  // Firing i covers pieces [i*P, (i+1)*P); P is one or a whole step, so steps map to whole
  // firings.
  const int64_t period = std::max<int64_t>(1, description->period);
  first_firing_ = (window.first * pieces_per_step + period - 1) / period;
  if (window.end >= 0) end_firing_ = (window.end * pieces_per_step + period - 1) / period;
}

FiringTimes* ActorTracer::BeforeLaunch(int64_t firing, const actors::ProtocolMessage* message) {
  Pending& pending = ring_[static_cast<size_t>(firing % ring_size_)];
  launching_ = &pending;
  pending.firing = firing;
  pending.recorded = false;
  pending.in_window = firing >= first_firing_ && firing < end_firing_;
  if (!pending.in_window) return nullptr;
  if (writer_->Reserve() == nullptr) return nullptr;  // Past the cap: no clock read.
  pending.recorded = true;
  trace::TraceEvent& event = pending.event;
  event = trace::TraceEvent();
  event.index = firing;
  event.actor = id_;
  event.type = trace::EventType::kFiring;
  if (message == nullptr) {
    // The start (no firing completed yet) or the previous firing's completion.
    event.cause = previous_ < 0 ? trace::CauseKind::kStart : trace::CauseKind::kPreviousFiring;
    event.peer = previous_ < 0 ? -1 : id_;
    event.register_id = -1;
    event.sequence = previous_;
  } else {
    event.cause = message->type == actors::MessageType::kReady ? trace::CauseKind::kInput
                                                               : trace::CauseKind::kSlot;
    event.peer = static_cast<int32_t>(message->from);
    event.register_id = static_cast<int32_t>(message->register_id);
    event.sequence = message->sequence;
  }
  // Only `end` is reset: a queue that does not stamp leaves end < 0 (or below a stale start),
  // which Keep takes as "not stamped".
  pending.times.end.store(-1, std::memory_order_relaxed);
  return &pending.times;
}

void ActorTracer::LaunchDeferred() {
  launching_->launch = TraceClock::Now();
}

void ActorTracer::Keep(Pending* pending) {
  if (!pending->recorded) {
    writer_->Commit();  // Reserve found no room: counted as dropped.
    return;
  }
  int64_t end = pending->times.end.load(std::memory_order_acquire);
  int64_t start = pending->times.start.load(std::memory_order_relaxed);
  if (start < 0 || end < start) {
    // The queue did not stamp it: what the actor saw, from the launch to this completion.
    start = pending->launch;
    end = TraceClock::Now();
  }
  pending->event.launch = std::min(pending->launch, start);
  pending->event.start = start;
  pending->event.end = end;
  if (trace::TraceEvent* event = writer_->Reserve()) *event = pending->event;
  writer_->Commit();  // Counts it as dropped where the cap left no room.
}

}  // namespace runtime
}  // namespace softwire
