#include "runtime/host/actor_tracer.h"

#include <algorithm>

#include "runtime/device/trace_clock.h"

namespace softwire {
namespace runtime {

ActorTracer::ActorTracer(trace::TraceWriter* writer, const actors::ActorDescription* description,
                         int64_t pieces_per_step, const trace::StepWindow& window)
    : writer_(writer), id_(static_cast<int32_t>(description->id)) {
  if (window.all()) return;
  // Firing i covers pieces [i*P, (i+1)*P); P is one or a whole step, so steps map to whole
  // firings.
  const int64_t period = std::max<int64_t>(1, description->period);
  first_firing_ = (window.first * pieces_per_step + period - 1) / period;
  if (window.end >= 0) end_firing_ = (window.end * pieces_per_step + period - 1) / period;
}

void ActorTracer::LaunchDeferred() {
  launch_ = TraceClock::Now();
}

void ActorTracer::Keep() {
  if (event_ != nullptr) {
    int64_t end = times_.end.load(std::memory_order_acquire);
    int64_t start = times_.start.load(std::memory_order_relaxed);
    if (start < 0 || end < start) {
      // The queue did not stamp it: what the actor saw, from the launch to this completion.
      start = launch_;
      end = TraceClock::Now();
    }
    event_->launch = std::min(launch_, start);
    event_->start = start;
    event_->end = end;
    event_ = nullptr;
  }
  writer_->Commit();  // Counts it as dropped where the cap left no room.
}

}  // namespace runtime
}  // namespace softwire
