// StrandQueue: the DeviceQueue of a cpu device. Kernels run on the threads that host the
// actors, one at a time: a launch that finds the strand idle takes it and runs its kernel
// right there (no thread hand-off at all, the common case); a launch that finds it busy is
// queued, and whichever thread holds the strand runs the queued launches before it lets go,
// reporting each completion to the launch's LaunchListener (a message to the waiting actor).
// Once a launch's stop flag is raised (its job failed), it is not run but completed with
// Cancelled, so a failing job stops quickly.
//
// A kernel that finishes off the queue (Kernel::finishes_off_queue: a send, whose bytes the
// data plane's writer thread writes) is started on the strand and the strand let go at once:
// its launch is always deferred, and its completion reaches the listener from whichever
// thread ends its work (Kernel::Start's `done`), while the strand runs other launches. Its
// FiringTimes span start to `done`, so its trace slice covers the transfer.
//
// Threading: thread-safe. The strand is held by at most one thread at a time.
#ifndef SOFTWIRE_RUNTIME_DEVICE_CPU_STRAND_QUEUE_H_
#define SOFTWIRE_RUNTIME_DEVICE_CPU_STRAND_QUEUE_H_

#include <deque>

#include "base/mutex.h"
#include "runtime/device/device_queue.h"

namespace softwire {
namespace runtime {

class StrandQueue final : public DeviceQueue {
 public:
  StrandQueue() = default;

  Outcome Launch(const LaunchRequest& request, Status* kernel_status) override EXCLUDES(mutex_);
  void ReleaseInline() override EXCLUDES(mutex_);

 private:
  Status Run(const LaunchRequest& request) const;
  // Starts a kernel that finishes off the queue; its completion is reported by `done`.
  static void Start(const LaunchRequest& request);

  Mutex mutex_;
  bool held_ GUARDED_BY(mutex_) = false;
  std::deque<LaunchRequest> deferred_ GUARDED_BY(mutex_);
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CPU_STRAND_QUEUE_H_
