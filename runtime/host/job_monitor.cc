#include "runtime/host/job_monitor.h"

namespace softwire {
namespace runtime {

JobMonitor::JobMonitor(int64_t actors, std::atomic<bool>* stopping)
    : actors_(actors), stopping_(stopping) {}

void JobMonitor::ActorFinished() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++finished_;
  if (finished_ == actors_) {
    ++events_;
    condition_.notify_all();
  }
}

void JobMonitor::Fail(Status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_.ok()) return;
  failure_ = status.ok() ? InternalError("a job failure was reported with an OK status")
                         : std::move(status);
  stopping_->store(true);
  ++events_;
  condition_.notify_all();
}

void JobMonitor::Notify() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++events_;
  condition_.notify_all();
}

void JobMonitor::WaitFor(std::chrono::steady_clock::duration timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  condition_.wait_for(lock, timeout, [&] { return events_ != seen_events_; });
  seen_events_ = events_;
}

bool JobMonitor::all_finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_ == actors_;
}

bool JobMonitor::failed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !failure_.ok();
}

Status JobMonitor::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

}  // namespace runtime
}  // namespace softwire
