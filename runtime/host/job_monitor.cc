#include "runtime/host/job_monitor.h"

namespace softwire {
namespace runtime {

JobMonitor::JobMonitor(int64_t actors, std::atomic<bool>* stopping)
    : actors_(actors), stopping_(stopping) {}

void JobMonitor::ActorFinished() {
  MutexLock lock(&mutex_);
  ++finished_;
  if (finished_ == actors_) {
    ++events_;
    condition_.NotifyAll();
  }
}

void JobMonitor::Fail(Status status) {
  MutexLock lock(&mutex_);
  if (!failure_.ok()) return;
  failure_ = status.ok() ? InternalError("a job failure was reported with an OK status")
                         : std::move(status);
  stopping_->store(true);
  ++events_;
  condition_.NotifyAll();
}

void JobMonitor::Notify() {
  MutexLock lock(&mutex_);
  ++events_;
  condition_.NotifyAll();
}

void JobMonitor::WaitFor(std::chrono::steady_clock::duration timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mutex_);
  while (events_ == seen_events_) {
    if (!condition_.WaitUntil(&lock, deadline)) break;
  }
  seen_events_ = events_;
}

bool JobMonitor::all_finished() const {
  MutexLock lock(&mutex_);
  return finished_ == actors_;
}

bool JobMonitor::failed() const {
  MutexLock lock(&mutex_);
  return !failure_.ok();
}

Status JobMonitor::failure() const {
  MutexLock lock(&mutex_);
  return failure_;
}

}  // namespace runtime
}  // namespace softwire
