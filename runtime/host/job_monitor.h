// JobMonitor: how a running job's actors tell the thread that waits for it that something
// happened: an actor finished, the job failed, a step completed.
//
// The waiting thread (the caller of RunPlan) sleeps in WaitFor between events; actors never
// wait on it. The first failure wins and raises the stop flag that queues check, so a failing
// job stops quickly; later failures (often consequences of the first) are dropped.
//
// Threading: thread-safe.
#ifndef SOFTWIRE_RUNTIME_HOST_JOB_MONITOR_H_
#define SOFTWIRE_RUNTIME_HOST_JOB_MONITOR_H_

#include <atomic>
#include <chrono>
#include <cstdint>

#include "base/mutex.h"
#include "base/status.h"

namespace softwire {
namespace runtime {

class JobMonitor {
 public:
  // `stopping` is the hosted plan's stop flag (its launches check it), lowered by the caller
  // before a run; borrowed, outlives the monitor.
  JobMonitor(int64_t actors, std::atomic<bool>* stopping);

  // An actor finished (docs/PROTOCOL.md, "End of stream"). Wakes the waiter after the last.
  void ActorFinished();
  // The job failed. Only the first call counts; it raises stopping() and wakes the waiter.
  void Fail(Status status);
  // Wakes the waiter to look at new progress (a completed step).
  void Notify();

  // Sleeps until an event newer than the last WaitFor, or until `timeout` passed.
  void WaitFor(std::chrono::steady_clock::duration timeout);

  bool all_finished() const;
  bool failed() const;
  // The first failure; OK while none happened.
  Status failure() const;
  // Raised by the first failure; queues stop running kernels once it is up.
  const std::atomic<bool>& stopping() const { return *stopping_; }

 private:
  const int64_t actors_;
  std::atomic<bool>* const stopping_;
  mutable Mutex mutex_;
  CondVar condition_;
  int64_t finished_ GUARDED_BY(mutex_) = 0;
  Status failure_ GUARDED_BY(mutex_);
  uint64_t events_ GUARDED_BY(mutex_) = 0;
  uint64_t seen_events_ GUARDED_BY(mutex_) = 0;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_JOB_MONITOR_H_
