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
// its launch is deferred, and its completion reaches the listener from whichever thread ends
// its work (Kernel::Start's `done`), while the strand runs other launches. Its FiringTimes span
// start to `done`, so its trace slice covers the transfer. When its work ends before Start
// returned (`done` called first: a small fill that the data plane wrote on this thread, or the
// in-process transport's memcpy), the launch ran inline instead (kRanInline, the strand held
// until ReleaseInline), and the listener is not told: the actor continues at once, without a
// completion message to itself (one CAF message and its dispatch per small fill). A launch
// that was queued behind a busy strand and started by its holder is always reported.
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
  enum class Started { kInFlight, kReported, kCompleted };
  // Starts a kernel that finishes off the queue; its completion is reported by `done` to the
  // listener (kInFlight, or kReported: cancelled at once). With `early_status`, a completion
  // that comes before Start returned is not reported but stored there (kCompleted).
  static Started Start(const LaunchRequest& request, Status* early_status);

  Mutex mutex_;
  bool held_ GUARDED_BY(mutex_) = false;
  std::deque<LaunchRequest> deferred_ GUARDED_BY(mutex_);
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CPU_STRAND_QUEUE_H_
