#include "runtime/device/cpu/strand_queue.h"

#include <glog/logging.h>

#include <atomic>
#include <exception>
#include <memory>
#include <string>

#include "base/guarded_call.h"
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
    Start(request);
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
      Start(request);  // Reported when its work ends.
      continue;
    }
    // Reported after the kernel returned and while we still hold the strand: the owner's
    // next launch then queues behind any launch already waiting, in arrival order.
    request.listener->OnLaunchCompleted(request.actor, request.firing, Run(request));
  }
}

void StrandQueue::Start(const LaunchRequest& request) {
  if (request.stopping->load(std::memory_order_relaxed)) {
    request.listener->OnLaunchCompleted(request.actor, request.firing,
                                        CancelledError("the job is stopping"));
    return;
  }
  // Exactly one report, also when Start throws after handing `done` on (then the first of the
  // two wins: the throw's error, or the work's end).
  auto reported = std::make_shared<std::atomic<bool>>(false);
  auto report = [request, reported](Status status) {
    if (reported->exchange(true)) return;
    if (request.times != nullptr) {
      request.times->end.store(TraceClock::Now(), std::memory_order_release);
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
}

Status StrandQueue::Run(const LaunchRequest& request) const {
  if (request.stopping->load(std::memory_order_relaxed)) {
    return CancelledError("the job is stopping");
  }
  // Kernels return Status and must not throw; if one does anyway (std::bad_alloc), the
  // exception must not unwind through the strand, which would stay held forever.
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
