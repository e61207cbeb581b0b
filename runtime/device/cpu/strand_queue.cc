#include "runtime/device/cpu/strand_queue.h"

#include <glog/logging.h>

#include <atomic>
#include <exception>
#include <memory>
#include <string>

#include "base/guarded_call.h"
#include "base/long_work.h"
#include "runtime/device/trace_clock.h"

namespace softwire {
namespace runtime {

DeviceQueue::Outcome StrandQueue::Launch(const LaunchRequest& request, Status* kernel_status) {
  {
    MutexLock lock(&mutex_);
    if (held_) {
      deferred_.push_back(request);
      return Outcome::kDeferred;
    }
    held_ = true;
  }
  if (request.kernel->finishes_off_queue()) {
    // Its work may end before Start returns (a small fill written on this thread): then it
    // completed inline, and the caller holds the strand as after any inline run.
    if (Start(request, kernel_status) == Started::kCompleted) return Outcome::kRanInline;
    ReleaseInline();  // Runs what queued meanwhile, then lets go.
    return Outcome::kDeferred;
  }
  *kernel_status = Run(request);
  return Outcome::kRanInline;
}

void StrandQueue::ReleaseInline() {
  while (true) {
    LaunchRequest request;
    {
      MutexLock lock(&mutex_);
      CHECK(held_) << "ReleaseInline on a strand nobody holds";
      if (deferred_.empty()) {
        held_ = false;
        return;
      }
      request = deferred_.front();
      deferred_.pop_front();
    }
    if (request.kernel->finishes_off_queue()) {
      Start(request, nullptr);  // Reported to its actor, on another thread, when its work ends.
      continue;
    }
    // Reported after the kernel returned and while we still hold the strand: the owner's
    // next launch then queues behind any launch already waiting, in arrival order.
    request.listener->OnLaunchCompleted(request.actor, request.firing, Run(request));
  }
}

namespace {

// One started firing's report: exactly one, also when Start throws after handing `done` on
// (then the first of the two wins: the throw's error, or the work's end). Until the launching
// thread's Start returned, a completion is kept here for it instead of going to the listener.
struct StartedFiring {
  std::atomic<bool> reported{false};
  Mutex mutex;
  bool start_returned GUARDED_BY(mutex) = false;
  bool completed GUARDED_BY(mutex) = false;
  Status status GUARDED_BY(mutex);
};

}  // namespace

StrandQueue::Started StrandQueue::Start(const LaunchRequest& request, Status* early_status) {
  if (request.stopping->load(std::memory_order_relaxed)) {
    request.listener->OnLaunchCompleted(request.actor, request.firing,
                                        CancelledError("the job is stopping"));
    return Started::kReported;
  }
  auto firing = std::make_shared<StartedFiring>();
  if (early_status == nullptr) {
    MutexLock lock(&firing->mutex);
    firing->start_returned = true;  // Nobody takes an early completion: report every one.
  }
  auto report = [request, firing](Status status) {
    if (firing->reported.exchange(true)) return;
    if (request.times != nullptr) {
      request.times->end.store(TraceClock::Now(), std::memory_order_release);
    }
    {
      MutexLock lock(&firing->mutex);
      if (!firing->start_returned) {  // The launching thread takes it when Start returns.
        firing->completed = true;
        firing->status = std::move(status);
        return;
      }
    }
    request.listener->OnLaunchCompleted(request.actor, request.firing, std::move(status));
  };
  if (request.times != nullptr) {
    request.times->start.store(TraceClock::Now(), std::memory_order_relaxed);
  }
  Status started = GuardedCall("kernel", [&request, &report] {
    request.kernel->Start(*request.context, report);
    return Status::Ok();
  });
  if (!started.ok()) report(std::move(started));
  if (early_status == nullptr) return Started::kInFlight;
  MutexLock lock(&firing->mutex);
  firing->start_returned = true;
  if (!firing->completed) return Started::kInFlight;
  *early_status = std::move(firing->status);
  return Started::kCompleted;
}

Status StrandQueue::Run(const LaunchRequest& request) const {
  if (request.stopping->load(std::memory_order_relaxed)) {
    return CancelledError("the job is stopping");
  }
  // Kernels return Status and must not throw; if one does anyway (std::bad_alloc), the
  // exception must not unwind through the strand, which would stay held forever.
  // A long kernel lets a reserve worker take this thread's queued messages meanwhile (a node
  // agent's scheduler, base/long_work.h).
  LongWorkScope long_work(request.estimated_seconds >= kLongWorkSeconds);
  auto run = [&request] { return request.kernel->Run(*request.context); };
  if (request.times == nullptr) return GuardedCall("kernel", run);
  // Traced: read while holding the strand, so a queue's slices never overlap.
  request.times->start.store(TraceClock::Now(), std::memory_order_relaxed);
  Status status = GuardedCall("kernel", run);
  request.times->end.store(TraceClock::Now(), std::memory_order_release);
  return status;
}

}  // namespace runtime
}  // namespace softwire
