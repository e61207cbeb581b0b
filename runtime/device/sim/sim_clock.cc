#include "runtime/device/sim/sim_clock.h"

#include <glog/logging.h>
#include <immintrin.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <string>

#include "base/guarded_call.h"
#include "base/thread_name.h"
#include "runtime/device/trace_clock.h"

namespace softwire {
namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

Clock::time_point TimePointOf(int64_t ns) {
  return Clock::time_point(
      std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

int64_t EstimateNs(const LaunchRequest& request) {
  if (!(request.estimated_seconds > 0)) return 0;
  return static_cast<int64_t>(std::llround(request.estimated_seconds * 1e9));
}

// Min-heap on deadline; equal deadlines complete in no particular order (different queues).
bool Later(const int64_t a, const int64_t b) {
  return a > b;
}

}  // namespace

// One device queue: a view of the clock.
class SimClock::Queue final : public DeviceQueue {
 public:
  Queue(SimClock* clock, int index) : clock_(clock), index_(index) {}

  Outcome Launch(const LaunchRequest& request, Status* kernel_status) override {
    return clock_->Launch(index_, request, kernel_status);
  }
  void ReleaseInline() override { clock_->ReleaseInline(index_); }
  bool runs_in_launch_order() const override { return clock_->options_.runs_in_launch_order; }

 private:
  SimClock* const clock_;
  const int index_;
};

SimClock::SimClock(SimClockOptions options)
    : options_(options),
      launch_latency_ns_(
          std::chrono::duration_cast<std::chrono::nanoseconds>(options.launch_latency).count()),
      earliest_(kNever) {
  heap_.reserve(64);
  due_.reserve(64);
  timer_ = std::thread([this] { Loop(); });
}

SimClock::~SimClock() {
  Stop();
}

std::unique_ptr<DeviceQueue> SimClock::AddQueue() {
  MutexLock lock(&mutex_);
  queues_.emplace_back();
  return std::make_unique<Queue>(this, static_cast<int>(queues_.size()) - 1);
}

void SimClock::SetWakeHost(std::function<void()> wake_host) {
  MutexLock lock(&mutex_);
  wake_host_ = std::move(wake_host);
}

void SimClock::Stop() {
  {
    MutexLock lock(&mutex_);
    stopped_ = true;
    heap_.clear();
    for (QueueState& queue : queues_) {
      queue.waiting.clear();
      queue.busy = false;
    }
    wake_host_ = nullptr;
    PublishEarliestLocked();
  }
  stop_spinning_.store(true, std::memory_order_relaxed);
  wake_timer_.NotifyAll();
  if (timer_.joinable() && timer_.get_id() != std::this_thread::get_id()) timer_.join();
}

void SimClock::CancelLaunches(const std::atomic<bool>* stopping) {
  std::vector<LaunchRequest> cancelled;
  {
    MutexLock lock(&mutex_);
    std::vector<Pending> kept;
    for (const Pending& pending : heap_) {
      if (pending.request.stopping != stopping) {
        kept.push_back(pending);
        continue;
      }
      cancelled.push_back(pending.request);
      queues_[static_cast<size_t>(pending.queue)].busy = false;
    }
    heap_ = std::move(kept);
    std::make_heap(heap_.begin(), heap_.end(), [](const Pending& a, const Pending& b) {
      return Later(a.deadline, b.deadline);
    });
    for (QueueState& queue : queues_) {
      std::deque<Waiting> kept_waiting;
      for (const Waiting& waiting : queue.waiting) {
        if (waiting.request.stopping == stopping) {
          cancelled.push_back(waiting.request);
        } else {
          kept_waiting.push_back(waiting);
        }
      }
      queue.waiting = std::move(kept_waiting);
    }
    PublishEarliestLocked();
  }
  for (const LaunchRequest& request : cancelled) {
    request.listener->OnLaunchCompleted(request.actor, request.firing,
                                        CancelledError("the job is stopping"));
  }
}

SimClockStats SimClock::stats() const {
  MutexLock lock(&mutex_);
  SimClockStats stats;
  stats.completions = completions_;
  if (completions_ > 0) stats.mean_lateness_us = lateness_sum_ns_ / completions_ / 1e3;
  stats.max_lateness_us = static_cast<double>(lateness_max_ns_) / 1e3;
  return stats;
}

DeviceQueue::Outcome SimClock::Launch(int queue, const LaunchRequest& request,
                                      Status* kernel_status) {
  MutexLock lock(&mutex_);
  if (stopped_) {
    *kernel_status = CancelledError("the job's sim devices have stopped");
    return DeviceQueue::Outcome::kRanInline;
  }
  QueueState& state = queues_[static_cast<size_t>(queue)];
  // A kernel (a launch that takes time) reaches the queue a launch latency later.
  const int64_t ready = NowNs() + (EstimateNs(request) > 0 ? launch_latency_ns_ : 0);
  if (state.busy) {
    state.waiting.push_back(Waiting{request, ready});
    return DeviceQueue::Outcome::kDeferred;
  }
  state.busy = true;
  if (EstimateNs(request) > 0) {
    StartLocked(queue, request, ready);
    return DeviceQueue::Outcome::kDeferred;
  }
  // Takes no time: done now, on the caller's thread, which holds the queue until
  // ReleaseInline.
  lock.Unlock();
  if (request.times != nullptr) {
    request.times->start.store(TraceClock::Now(), std::memory_order_relaxed);
  }
  *kernel_status = RunKernel(request);
  return DeviceQueue::Outcome::kRanInline;
}

void SimClock::ReleaseInline(int queue) {
  MutexLock lock(&mutex_);
  QueueState& state = queues_[static_cast<size_t>(queue)];
  while (!stopped_) {
    CHECK(state.busy) << "ReleaseInline on a sim queue nobody holds";
    if (state.waiting.empty()) {
      state.busy = false;
      return;
    }
    const Waiting waiting = state.waiting.front();
    const LaunchRequest& next = waiting.request;
    state.waiting.pop_front();
    if (EstimateNs(next) > 0) {
      StartLocked(queue, next, std::max(NowNs(), waiting.ready));
      return;
    }
    // Launches that take no time run here, as a strand runs what queued behind its holder.
    lock.Unlock();
    if (next.times != nullptr)
      next.times->start.store(TraceClock::Now(), std::memory_order_relaxed);
    next.listener->OnLaunchCompleted(next.actor, next.firing, RunKernel(next));
    lock.Lock();
  }
}

void SimClock::StartLocked(int queue, const LaunchRequest& request, int64_t start) {
  if (request.times != nullptr) {
    request.times->start.store(TraceClock::Now(), std::memory_order_relaxed);
  }
  Pending pending;
  pending.deadline = start + EstimateNs(request);
  pending.queue = queue;
  pending.request = request;
  heap_.push_back(pending);
  std::push_heap(heap_.begin(), heap_.end(),
                 [](const Pending& a, const Pending& b) { return Later(a.deadline, b.deadline); });
  if (heap_.front().deadline == pending.deadline) {
    PublishEarliestLocked();
    if (timer_sleeping_) wake_timer_.NotifyOne();
  }
}

void SimClock::PublishEarliestLocked() {
  earliest_.store(heap_.empty() ? kNever : heap_.front().deadline, std::memory_order_relaxed);
}

Status SimClock::RunKernel(const LaunchRequest& request) const {
  if (request.stopping->load(std::memory_order_relaxed))
    return CancelledError("the job is stopping");
  Status status =
      GuardedCall("kernel", [&request] { return request.kernel->Run(*request.context); });
  if (request.times != nullptr) {
    request.times->end.store(TraceClock::Now(), std::memory_order_release);
  }
  return status;
}

void SimClock::CompleteDue(int64_t now) {
  const auto later = [](const Pending& a, const Pending& b) {
    return Later(a.deadline, b.deadline);
  };
  while (!heap_.empty() && heap_.front().deadline <= now) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const Pending done = heap_.back();
    heap_.pop_back();
    due_.push_back(done);
    QueueState& state = queues_[static_cast<size_t>(done.queue)];
    if (state.waiting.empty()) {
      state.busy = false;
      continue;
    }
    // The device was busy until the deadline, not until we noticed it: the next launch
    // starts then, so a late wake-up never delays a device's later launches.
    const Waiting next = state.waiting.front();
    state.waiting.pop_front();
    StartLocked(done.queue, next.request, std::max(done.deadline, next.ready));
  }
  PublishEarliestLocked();
  mutex_.Unlock();
  double lateness_sum = 0;
  int64_t lateness_max = 0;
  for (const Pending& done : due_) {
    const int64_t lateness = NowNs() - done.deadline;
    lateness_sum += static_cast<double>(lateness);
    lateness_max = std::max(lateness_max, lateness);
    done.request.listener->OnLaunchCompleted(done.request.actor, done.request.firing,
                                             RunKernel(done.request));
  }
  host_told_at_ = NowNs();
  mutex_.Lock();
  completions_ += static_cast<int64_t>(due_.size());
  lateness_sum_ns_ += lateness_sum;
  lateness_max_ns_ = std::max(lateness_max_ns_, lateness_max);
  due_.clear();
}

void SimClock::SpinUntil(int64_t until) const {
  while (!stop_spinning_.load(std::memory_order_relaxed)) {
    const int64_t now = NowNs();
    if (now >= until || now >= earliest_.load(std::memory_order_relaxed)) return;
    _mm_pause();
  }
}

void SimClock::Loop() {
  NameCurrentThread("sw:sim/clock");
  // Timers of this thread fire as close to their time as the kernel can (the default slack
  // of 50 us would make every sleep that late).
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  const int64_t spin = std::chrono::nanoseconds(options_.spin).count();
  const int64_t linger = std::chrono::nanoseconds(options_.linger).count();
  const int64_t host_awake = std::chrono::nanoseconds(options_.host_awake).count();
  MutexLock lock(&mutex_);
  int64_t linger_until = 0;
  while (!stopped_) {
    const int64_t now = NowNs();
    if (!heap_.empty() && heap_.front().deadline <= now) {
      CompleteDue(now);
      linger_until = NowNs() + linger;
      continue;
    }
    const int64_t next = heap_.empty() ? kNever : heap_.front().deadline;
    if (now >= linger_until && (next == kNever || now < next - spin)) {
      timer_sleeping_ = true;
      if (next == kNever) {
        wake_timer_.Wait(&lock);
      } else {
        wake_timer_.WaitUntil(&lock, TimePointOf(next - spin));
      }
      timer_sleeping_ = false;
      continue;
    }
    if (next != kNever && wake_host_ && now - host_told_at_ > host_awake) {
      // The host's workers may be asleep: wake one now, so that it spins when the completion
      // comes instead of paying a sleeping thread's wake-up then.
      host_told_at_ = now;
      wake_host_();
      continue;
    }
    lock.Unlock();
    SpinUntil(std::min(next, std::max(linger_until, now + 20000)));
    lock.Lock();
  }
}

}  // namespace runtime
}  // namespace softwire
