// DeviceQueue: where an actor's firings execute. Every device has one or more queues, and a
// queue runs one kernel at a time, so one trace track per queue never overlaps and a device's
// cores are never oversubscribed. docs/RUNTIME.md explains the execution model.
//
// A launch completes in one of two ways, and hosts handle both:
//   - inline: the queue was idle and ran the kernel right away on the calling thread (the cpu
//     strand). The caller continues its protocol synchronously, then calls ReleaseInline();
//   - deferred: the queue accepted the launch and later reports its completion, from any
//     thread, to the LaunchListener (a busy cpu strand, a sim timer; a cuda event).
//
//   Status kernel_status;
//   if (queue->Launch(request, &kernel_status) == DeviceQueue::Outcome::kRanInline) {
//     ... OnFiringDone, send Releases and Readies ...
//     queue->ReleaseInline();
//   }  // else: wait for LaunchListener::OnLaunchCompleted(actor, firing, status).
//
// Threading: every method may be called from any thread.
#ifndef SOFTWIRE_RUNTIME_DEVICE_DEVICE_QUEUE_H_
#define SOFTWIRE_RUNTIME_DEVICE_DEVICE_QUEUE_H_

#include <atomic>
#include <cstdint>

#include "base/status.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

// When a traced firing's kernel ran, in TraceClock ticks (trace_clock.h). -1: not yet.
// Written by the thread that runs the kernel, read by the actor after the completion: the
// queue stores `start`, then `end` with release; the actor loads `end` with acquire, then
// `start`. (On x86 these are plain moves; the order is explicit so that it does not rest on
// CAF's mailbox alone, which ThreadSanitizer cannot see into.)
struct FiringTimes {
  std::atomic<int64_t> start{-1};
  std::atomic<int64_t> end{-1};
};

class LaunchListener;

// One firing to run. The pointers are borrowed: the kernel, its context, the listener and the
// stop flag belong to the hosted plan and outlive every launch of it; the context is not touched
// by its actor until the firing completed. A queue serves the launches of any hosted plan: what
// it reports to, and when it stops running them, comes with each launch, not with the queue.
struct LaunchRequest {
  int64_t actor = -1;
  int64_t firing = 0;
  Kernel* kernel = nullptr;
  const KernelContext* context = nullptr;
  double estimated_seconds = 0;  // ActorDef.estimated_seconds, for queues that simulate time.
  // Set when the job is traced (null otherwise): a queue writes into it when the kernel began
  // and ended on the device, read with TraceClock::Now() (a sim queue: when its timer started
  // and fired), `end` last and with release order. The actor reads it after the completion,
  // so the queue needs no synchronization beyond the completion itself. A queue that leaves it
  // untouched gets the actor's own view (launch to completion) in the trace.
  FiringTimes* times = nullptr;
  // Told when a deferred launch completed. Never null.
  LaunchListener* listener = nullptr;
  // Once true (its job is stopping), a launch not yet begun completes with Cancelled instead of
  // running. Never null.
  const std::atomic<bool>* stopping = nullptr;
};

// Told when a deferred launch completed. Thread-safe; must not block.
class LaunchListener {
 public:
  virtual ~LaunchListener() = default;
  virtual void OnLaunchCompleted(int64_t actor, int64_t firing, Status status) = 0;
};

class DeviceQueue {
 public:
  enum class Outcome { kRanInline, kDeferred };

  virtual ~DeviceQueue() = default;

  // Runs `request` now on the calling thread (kRanInline; *kernel_status is the kernel's
  // result and the caller holds the queue until ReleaseInline), or accepts it and reports its
  // completion to the listener later (kDeferred). A caller holding the queue must not launch
  // again before ReleaseInline.
  virtual Outcome Launch(const LaunchRequest& request, Status* kernel_status) = 0;

  // Gives back a queue taken by an inline launch. Launches deferred meanwhile run first, on
  // this thread, each reported to the listener.
  virtual void ReleaseInline() = 0;

  // True when the queue runs its launches' work in the order Launch was called, each after the
  // previous one's finished, whoever launched them (a CUDA stream). Hosts then let a consumer
  // on the same queue launch right after its producer launched, and a reader release a slot
  // when it launched (docs/PROTOCOL.md, "Stream-ordered edges"). Queues that do not say so
  // (cpu strands, whose kernels mostly run inline anyway, and sim queues) keep every Ready and
  // Release behind its firing's completion.
  virtual bool runs_in_launch_order() const { return false; }
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_DEVICE_QUEUE_H_
