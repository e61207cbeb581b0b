// SimClock: the timer of a runtime's `sim` devices. A sim device computes nothing: each launch on
// one of its queues completes exactly ActorDef.estimated_seconds of real time after it started,
// and a queue runs one launch at a time (FIFO), as the simulator models it (simulator/README.md).
// That lets a plan's protocol, pipelining and overlap run in real time on CAF, at any scale, on
// a 2-core machine. docs/RUNTIME.md ("Sim devices") explains the design and its measured
// accuracy.
//
// One thread serves every sim queue of the runtime: a heap of deadlines (one per busy queue). It
// sleeps until shortly before the earliest deadline, spins the rest of the way (a sleeping
// thread wakes tens of microseconds late on this VM, docs/MACHINE.md), then completes the
// launch: it runs the sim kernel (nothing, or a sink's report), starts the queue's next waiting
// launch at the very deadline (so lateness never accumulates on a device), and reports the
// completion to the launch's LaunchListener (a LaunchDone message to the actor). Before it spins
// toward a deadline it calls `wake_host` once, so the CAF worker that will handle the completion is
// awake when it comes (with a scheduler that spins before it sleeps, caf_options.h).
//
//   SimClock clock(SimClockOptions());
//   std::unique_ptr<DeviceQueue> queue = clock.AddQueue();   // one per device queue
//   ... launches, each naming its listener and stop flag ...
//   clock.Stop();                                   // before the queues and listeners go away
//
// Launches whose estimate is <= 0 that find their queue idle complete inline (kRanInline).
// Threading: AddQueue before the first launch, on one thread; everything else thread-safe.
// Ownership: a launch's listener and stop flag must outlive its completion (or Stop()).
#ifndef SOFTWIRE_RUNTIME_DEVICE_SIM_SIM_CLOCK_H_
#define SOFTWIRE_RUNTIME_DEVICE_SIM_SIM_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "runtime/device/device_queue.h"

namespace softwire {
namespace runtime {

struct SimClockOptions {
  // How long before a deadline the timer thread stops sleeping and spins. Covers the wake-up
  // of a sleeping thread (~60-80 us here with the timer slack at its minimum) with margin.
  std::chrono::microseconds spin{200};
  // How long the timer thread keeps spinning after a completion, waiting for the launches the
  // completion lets follow (they often have short estimates: copies).
  std::chrono::microseconds linger{100};
  // Call wake_host when the host was last told anything longer ago than this (its workers spin
  // about twice this long after their last job).
  std::chrono::microseconds host_awake{150};
  // How long a kernel launch takes to reach its queue, as on a GPU: a launch that takes time
  // (estimate > 0) starts no sooner than this after it was made, and launches made meanwhile
  // overlap their latency (what several firings in flight buy, docs/PROTOCOL.md). Launches
  // that take no time (sources, sinks: host work) have none. 0: at once.
  std::chrono::microseconds launch_latency{0};
  // Whether the queues say they run in launch order (DeviceQueue::runs_in_launch_order): they
  // do (FIFO, one launch at a time, busy from a launch through its latency to its completion),
  // but by default they say no, so the runtime's sim devices keep the protocol the simulator
  // models (every Ready and Release at a completion). True lets the host's stream-ordered
  // edges run on sim devices, as on a GPU's streams, to test that path without one.
  bool runs_in_launch_order = false;
};

// How exactly completions kept their deadlines: lateness = when the timer thread reported the
// completion minus its deadline.
struct SimClockStats {
  int64_t completions = 0;
  double mean_lateness_us = 0;
  double max_lateness_us = 0;
};

class SimClock {
 public:
  explicit SimClock(SimClockOptions options);
  ~SimClock();  // Stop().
  SimClock(const SimClock&) = delete;
  SimClock& operator=(const SimClock&) = delete;

  // A new queue served by this clock. The queue borrows the clock, which must outlive it.
  std::unique_ptr<DeviceQueue> AddQueue();

  // Called from the timer thread before it spins toward a deadline when the host may be asleep
  // (see SimClockOptions::host_awake). Must be cheap and must not block; empty: never called.
  void SetWakeHost(std::function<void()> wake_host);

  // Drops every pending launch (never completed) and joins the timer thread. Later launches
  // complete inline with Cancelled. Idempotent.
  void Stop();

  // Completes now, with Cancelled and reported to their listeners, every launch whose stop flag
  // is `stopping` (pending or waiting): a stopped run does not wait out its launches' durations.
  // The queues they held are free again.
  void CancelLaunches(const std::atomic<bool>* stopping);

  SimClockStats stats() const;

 private:
  class Queue;
  struct Pending {
    int64_t deadline = 0;  // steady_clock nanoseconds.
    int queue = 0;
    LaunchRequest request;
  };
  struct Waiting {
    LaunchRequest request;
    int64_t ready = 0;  // steady_clock nanoseconds: launched + launch_latency.
  };
  struct QueueState {
    bool busy = false;            // Running a launch (timed, or inline).
    std::deque<Waiting> waiting;  // Launched while busy, FIFO.
  };

  DeviceQueue::Outcome Launch(int queue, const LaunchRequest& request, Status* kernel_status);
  void ReleaseInline(int queue);
  // Starts `request` on `queue` at `start` (ns): pushes its deadline.
  void StartLocked(int queue, const LaunchRequest& request, int64_t start) REQUIRES(mutex_);
  // Pops every launch due at `now`, starting each queue's next; reports them with mutex_
  // released in between.
  void CompleteDue(int64_t now) REQUIRES(mutex_);
  Status RunKernel(const LaunchRequest& request) const;
  void Loop();
  // Spins without the lock until the earliest deadline, `until`, or a stop.
  void SpinUntil(int64_t until) const;
  void PublishEarliestLocked() REQUIRES(mutex_);

  const SimClockOptions options_;
  const int64_t launch_latency_ns_;  // options_.launch_latency.

  mutable Mutex mutex_;
  CondVar wake_timer_;
  std::vector<QueueState> queues_ GUARDED_BY(mutex_);
  std::vector<Pending> heap_ GUARDED_BY(mutex_);  // Min-heap on deadline.
  std::vector<Pending> due_;                      // Timer thread only: completions being reported.
  bool timer_sleeping_ GUARDED_BY(mutex_) = false;
  bool stopped_ GUARDED_BY(mutex_) = false;
  std::function<void()> wake_host_ GUARDED_BY(mutex_);
  int64_t host_told_at_ = 0;       // Timer thread only: last completion or wake, ns.
  std::atomic<int64_t> earliest_;  // heap_'s first deadline, for the spinning thread.
  std::atomic<bool> stop_spinning_{false};
  int64_t completions_ GUARDED_BY(mutex_) = 0;
  double lateness_sum_ns_ GUARDED_BY(mutex_) = 0;
  int64_t lateness_max_ns_ GUARDED_BY(mutex_) = 0;
  std::thread timer_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_SIM_SIM_CLOCK_H_
