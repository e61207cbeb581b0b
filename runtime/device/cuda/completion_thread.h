// CompletionThread: reports the completions of one device queue's launches, in launch order,
// from a thread of its own. The queue enqueues a launch's work on its stream, records a marker
// behind it (a cuda event pair: cuda_event_pool.h) and hands the launch here; the thread waits
// for each marker in turn and tells the launch's LaunchListener (device_queue.h). Nothing
// synchronizes the whole device: one wait per launch, on that launch's own marker.
//
// It knows nothing of CUDA: what a marker is and how to wait for one is the LaunchMarkers
// interface, so the ordering, the times and the failure paths are tested with a fake
// (completion_thread_test.cc) on machines without a GPU.
//
//   CompletionThread completions("sw:cuda0/q0", &event_pool);
//   completions.Add(PendingLaunch{actor, firing, listener, times, marker, Status::Ok()});
//
// Threading: Add may be called from any thread; completions are reported from the one thread,
// in the order of the Add calls (a stream is FIFO, so that is the order the device ends them).
// The destructor waits for every launch added, reports it, then joins the thread.
#ifndef SOFTWIRE_RUNTIME_DEVICE_CUDA_COMPLETION_THREAD_H_
#define SOFTWIRE_RUNTIME_DEVICE_CUDA_COMPLETION_THREAD_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"
#include "runtime/device/device_queue.h"
#include "runtime/kernels/cuda/launch_outcome.h"

namespace softwire {
namespace runtime {

// What the completion thread asks of the device about one launch's marker.
class LaunchMarkers {
 public:
  virtual ~LaunchMarkers() = default;
  // Blocks until the work enqueued before `marker` ended on the device. On success, sets
  // *start_ticks and *end_ticks (TraceClock ticks, trace_clock.h) to when the launch's kernel
  // began and ended. A failure names the device and the device's error.
  virtual Status Wait(void* marker, int64_t* start_ticks, int64_t* end_ticks) = 0;
  // Gives `marker` back for reuse; called once per marker, after its Wait.
  virtual void Recycle(void* marker) = 0;
};

// One launch whose completion is still to be reported. Borrowed pointers as in LaunchRequest.
struct PendingLaunch {
  int64_t actor = -1;
  int64_t firing = 0;
  LaunchListener* listener = nullptr;
  FiringTimes* times = nullptr;  // Null: untraced.
  void* marker = nullptr;        // Null: nothing reached the device; `status` is the outcome.
  // Set when the launch's kernel reports part of its result itself (a host function's): asked
  // once, after the wait, and its error becomes the launch's status. Null otherwise.
  LaunchOutcome* outcome = nullptr;
  // Not OK when the launch failed (or was cancelled) before or while its work was enqueued:
  // reported in its turn, after waiting for its marker when it has one.
  Status status;
};

class CompletionThread {
 public:
  // Starts the thread, named `thread_name` (at most 15 characters are kept). `markers` is
  // borrowed and outlives this object.
  CompletionThread(std::string thread_name, LaunchMarkers* markers);
  ~CompletionThread();
  CompletionThread(const CompletionThread&) = delete;
  CompletionThread& operator=(const CompletionThread&) = delete;

  void Add(PendingLaunch launch);

  // Launches added and not yet reported.
  int64_t pending() const;

 private:
  void Loop();
  void Report(PendingLaunch& launch);

  LaunchMarkers* const markers_;
  mutable std::mutex mutex_;
  std::condition_variable added_;
  std::deque<PendingLaunch> pending_;  // Under mutex_; front: the oldest.
  int64_t reporting_ = 0;              // Under mutex_: taken from pending_, not yet reported.
  bool stopping_ = false;              // Under mutex_.
  std::thread thread_;                 // Last: starts after the members above exist.
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CUDA_COMPLETION_THREAD_H_
