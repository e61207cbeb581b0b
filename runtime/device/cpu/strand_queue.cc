#include "runtime/device/cpu/strand_queue.h"

#include <glog/logging.h>

#include <exception>
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
    // Reported after the kernel returned and while we still hold the strand: the owner's
    // next launch then queues behind any launch already waiting, in arrival order.
    request.listener->OnLaunchCompleted(request.actor, request.firing, Run(request));
  }
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
