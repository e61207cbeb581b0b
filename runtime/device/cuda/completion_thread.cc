#include "runtime/device/cuda/completion_thread.h"

#include <pthread.h>

#include <utility>

namespace softwire {
namespace runtime {

CompletionThread::CompletionThread(std::string thread_name, LaunchMarkers* markers)
    : markers_(markers) {
  thread_ = std::thread([this, name = std::move(thread_name)] {
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    Loop();
  });
}

CompletionThread::~CompletionThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  added_.notify_one();
  thread_.join();
}

void CompletionThread::Add(PendingLaunch launch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back(std::move(launch));
  }
  added_.notify_one();
}

int64_t CompletionThread::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(pending_.size()) + reporting_;
}

void CompletionThread::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    added_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
    if (pending_.empty()) return;  // Stopping, and every launch added was reported.
    PendingLaunch launch = std::move(pending_.front());
    pending_.pop_front();
    ++reporting_;
    lock.unlock();
    Report(launch);  // Waits on the device without holding the lock: Add never blocks.
    lock.lock();
    --reporting_;
  }
}

void CompletionThread::Report(PendingLaunch& launch) {
  Status status = std::move(launch.status);
  if (launch.marker != nullptr) {
    int64_t start = -1;
    int64_t end = -1;
    Status waited = markers_->Wait(launch.marker, &start, &end);
    markers_->Recycle(launch.marker);
    if (status.ok()) status = std::move(waited);
    if (status.ok() && launch.times != nullptr) {
      launch.times->start.store(start, std::memory_order_relaxed);
      launch.times->end.store(end, std::memory_order_release);
    }
  }
  if (launch.outcome != nullptr) {
    // Always taken: it counts launches.
    Status outcome = launch.outcome->TakeOutcome(/*reached=*/status.ok());
    if (status.ok()) status = std::move(outcome);
  }
  launch.listener->OnLaunchCompleted(launch.actor, launch.firing, std::move(status));
}

}  // namespace runtime
}  // namespace softwire
