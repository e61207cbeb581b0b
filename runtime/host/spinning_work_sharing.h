// SpinningWorkSharing: CAF's `sharing` scheduler policy (one central job queue), except that
// a worker that finds the queue empty spins for a while before it sleeps on the condition
// variable. On this VM a sleeping worker takes ~5-80 us to wake after a cross-thread enqueue
// (docs/MACHINE.md); a spinning one ~0.1 us. Used for plans with `sim` devices, whose timer
// thread (sim_clock.h) wakes a worker shortly before each completion so that the completion is
// handled at once; see docs/RUNTIME.md ("Sim devices") for the measurements behind it.
//
// Installed by ConfigureCaf (caf_options.h) as the scheduler module when
// CafOptions::worker_spin_us > 0; the spin is read from the config key
// "softwire.worker-spin-us" (HostCafConfig declares it). CAF 0.17's policy interface: a port to
// CAF 1.x touches this file and caf_options.cc only.
//
// Threading: the policy's methods are called by CAF's workers and by any thread that enqueues.
#ifndef SOFTWIRE_RUNTIME_HOST_SPINNING_WORK_SHARING_H_
#define SOFTWIRE_RUNTIME_HOST_SPINNING_WORK_SHARING_H_

#include <immintrin.h>

#include <atomic>
#include <caf/actor_system_config.hpp>
#include <caf/config_value.hpp>
#include <caf/resumable.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>
#include <caf/settings.hpp>
#include <chrono>
#include <cstddef>
#include <deque>

#include "base/mutex.h"
#include "runtime/host/central_queue_policy.h"

namespace softwire {
namespace runtime {

// The config key holding the spin in microseconds.
// An array, not a pointer: CAF 0.17's string_view takes a `const char*` only under GCC.
constexpr char kWorkerSpinKey[] = "softwire.worker-spin-us";

class SpinningWorkSharing : public CentralQueuePolicy<SpinningWorkSharing> {
 public:
  struct coordinator_data {
    explicit coordinator_data(caf::scheduler::abstract_coordinator* coordinator)
        : spin(std::chrono::microseconds(caf::get_or(caf::content(coordinator->system().config()),
                                                     kWorkerSpinKey, size_t{0}))) {}

    const std::chrono::steady_clock::duration spin;
    Mutex lock;
    CondVar wake;
    std::deque<caf::resumable*> queue GUARDED_BY(lock);
    int sleepers GUARDED_BY(lock) = 0;
    std::atomic<size_t> queued{0};  // queue.size(), for spinning workers to poll.
  };

  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {}
  };

  template <class Coordinator>
  void enqueue(Coordinator* self, caf::resumable* job) {
    coordinator_data& data = d(self);
    bool wake = false;
    {
      MutexLock guard(&data.lock);
      data.queue.push_back(job);
      data.queued.store(data.queue.size(), std::memory_order_release);
      wake = data.sleepers > 0;
    }
    // A spinning worker sees the job without a futex call.
    if (wake) data.wake.NotifyOne();
  }

  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    coordinator_data& data = d(self->parent());
    const auto spin_until = std::chrono::steady_clock::now() + data.spin;
    for (int polls = 0;; ++polls) {
      if (data.queued.load(std::memory_order_acquire) > 0) {
        MutexLock guard(&data.lock);
        if (!data.queue.empty()) return PopLocked(&data);
      }
      // The clock is read every 64 polls: ~0.1 us apart, cheap beside the pause.
      if ((polls & 63) == 63 && std::chrono::steady_clock::now() >= spin_until) break;
      _mm_pause();
    }
    MutexLock guard(&data.lock);
    ++data.sleepers;
    while (data.queue.empty()) data.wake.Wait(&guard);
    --data.sleepers;
    return PopLocked(&data);
  }

  template <class Coordinator, class UnaryFunction>
  void foreach_central_resumable(Coordinator* self, UnaryFunction f) {
    coordinator_data& data = d(self);
    MutexLock guard(&data.lock);
    while (!data.queue.empty()) {
      caf::resumable* job = data.queue.front();
      data.queue.pop_front();
      f(job);
    }
    data.queued.store(0, std::memory_order_release);
  }

 private:
  static caf::resumable* PopLocked(coordinator_data* data) REQUIRES(data->lock) {
    caf::resumable* job = data->queue.front();
    data->queue.pop_front();
    data->queued.store(data->queue.size(), std::memory_order_release);
    return job;
  }
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_SPINNING_WORK_SHARING_H_
