// ReserveWorkSharing: CAF's `sharing` scheduler policy (one central job queue) with its last
// worker kept in reserve: the reserve takes queued work only while every other worker (a
// primary) is inside long work (base/long_work.h: a kernel the cost model puts at 200 us or
// more, run inline on the worker that holds its device's compute strand). A node agent runs on it
// (CafOptions::transfer_worker, docs/DECISIONS.md 37): the Readies, Releases and fills that reach
// a node from other processes while its one primary runs a 6 ms kernel are handled at once, and
// a stream of short firings still runs on one thread, as with one worker, without the
// cross-thread wake-ups a plain second worker costs (3.3-3.8 context switches per 64 KiB fill
// against 0.8, BENCHMARKS.md "Data plane").
//
// Primaries sleep on one condition variable and are woken by any enqueue that finds one asleep;
// the reserve sleeps on its own, woken by an enqueue, or by a primary beginning long work, when
// every primary is in long work and work is queued. So that no job can wait forever (a primary
// blocked outside long work; the coordinator's shutdown, which hands each worker a job of its own
// in turn), the reserve also takes the queue's front when it has slept kReserveRescue without
// being woken.
//
// Installed by ConfigureCaf (caf_options.h) as the scheduler module for CafOptions::
// transfer_worker with the default thread count and no spin. CAF 0.17's policy interface, as
// SpinningWorkSharing's.
//
// Threading: the policy's methods are called by CAF's workers and by any thread that enqueues;
// LongWorkBegan/Ended by a primary worker's own thread.
#ifndef SOFTWIRE_RUNTIME_HOST_RESERVE_WORK_SHARING_H_
#define SOFTWIRE_RUNTIME_HOST_RESERVE_WORK_SHARING_H_

#include <caf/resumable.hpp>
#include <caf/scheduler/abstract_coordinator.hpp>
#include <chrono>
#include <cstddef>
#include <deque>

#include "base/long_work.h"
#include "base/mutex.h"
#include "runtime/host/central_queue_policy.h"

namespace softwire {
namespace runtime {

// How long the reserve sleeps before it looks at the queue unasked.
constexpr std::chrono::milliseconds kReserveRescue{20};

class ReserveWorkSharing : public CentralQueuePolicy<ReserveWorkSharing> {
 public:
  struct coordinator_data final : LongWorkListener {
    explicit coordinator_data(caf::scheduler::abstract_coordinator*) {}

    void LongWorkBegan() override {
      MutexLock guard(&lock);
      ++primaries_in_long_work;
      if (ReserveMayTakeLocked() && reserve_sleeping) reserve_wake.NotifyOne();
    }
    void LongWorkEnded() override {
      MutexLock guard(&lock);
      --primaries_in_long_work;
    }

    // Work is queued and no primary can take it before its long work ends.
    bool ReserveMayTakeLocked() const REQUIRES(lock) {
      return !queue.empty() && primaries > 0 && primaries_in_long_work >= primaries;
    }

    Mutex lock;
    CondVar primary_wake;
    CondVar reserve_wake;
    std::deque<caf::resumable*> queue GUARDED_BY(lock);
    size_t primaries GUARDED_BY(lock) = 0;  // Set by the first dequeue: workers - 1.
    size_t primaries_in_long_work GUARDED_BY(lock) = 0;
    int primary_sleepers GUARDED_BY(lock) = 0;
    bool reserve_sleeping GUARDED_BY(lock) = false;
  };

  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {}
  };

  template <class Coordinator>
  void enqueue(Coordinator* self, caf::resumable* job) {
    coordinator_data& data = d(self);
    bool wake_primary = false;
    bool wake_reserve = false;
    {
      MutexLock guard(&data.lock);
      data.queue.push_back(job);
      if (data.primary_sleepers > 0) {
        wake_primary = true;
      } else if (data.reserve_sleeping && data.ReserveMayTakeLocked()) {
        wake_reserve = true;
      }
    }
    if (wake_primary) data.primary_wake.NotifyOne();
    if (wake_reserve) data.reserve_wake.NotifyOne();
  }

  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    coordinator_data& data = d(self->parent());
    const size_t workers = self->parent()->num_workers();
    const bool reserve = workers > 1 && self->id() == workers - 1;
    if (!reserve && ThreadLongWorkListener() != &data) SetThreadLongWorkListener(&data);
    MutexLock guard(&data.lock);
    if (data.primaries == 0) data.primaries = workers > 1 ? workers - 1 : workers;
    if (!reserve) {
      while (data.queue.empty()) {
        ++data.primary_sleepers;
        data.primary_wake.Wait(&guard);
        --data.primary_sleepers;
      }
      return PopLocked(&data);
    }
    while (!data.ReserveMayTakeLocked()) {
      data.reserve_sleeping = true;
      const bool woken =
          data.reserve_wake.WaitUntil(&guard, std::chrono::steady_clock::now() + kReserveRescue);
      data.reserve_sleeping = false;
      if (!woken && !data.queue.empty()) break;  // Unasked: take the front anyway.
    }
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
  }

 private:
  static caf::resumable* PopLocked(coordinator_data* data) REQUIRES(data->lock) {
    caf::resumable* job = data->queue.front();
    data->queue.pop_front();
    return job;
  }
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_RESERVE_WORK_SHARING_H_
