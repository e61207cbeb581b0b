// CudaStreamQueue: one queue of a cuda device (device_queue.h), backed by a CUDA stream of its
// own (queue 0 computes; copy queues get their own streams, so copies overlap compute). Every
// launch is deferred: Launch enqueues the kernel's work on the stream (CudaKernel::Enqueue)
// between the two events of a marker and returns; the queue's CompletionThread reports the
// launch to its listener when the end event is reached. The host never synchronizes the
// device per launch, so an actor with max_in_flight k has up to k firings queued on the
// stream while the host handles other messages (docs/PROTOCOL.md, "Several firings in
// flight").
//
// Launches are enqueued in the order Launch is called (a lock per queue makes the stream's
// order and the completion order the same), and reported in that order. A launch whose job is
// stopping is reported Cancelled without reaching the stream; one whose kernel is not a cuda
// kernel (a host kernel on a cuda device: a wire send) fails naming the actor's firing.
//
// Threading: Launch may be called from any thread. Ownership: owns its stream, cuBLAS handle,
// events and completion thread; borrows nothing beyond each launch's pointers.
#ifndef SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_STREAM_QUEUE_H_
#define SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_STREAM_QUEUE_H_

#include <memory>
#include <mutex>
#include <string>

#include "runtime/device/cuda/completion_thread.h"
#include "runtime/device/cuda/cuda_event_pool.h"
#include "runtime/device/device.h"
#include "runtime/device/device_queue.h"
#include "runtime/kernels/cuda/cuda_kernel.h"

namespace softwire {
namespace runtime {

class CudaStreamQueue final : public DeviceQueue {
 public:
  // Creates queue `index` of CUDA device `ordinal` (the caller made it current): a non-blocking
  // stream, a cuBLAS handle on it (TF32 tensor-core math only when `allow_tf32`) and the
  // completion thread "sw:<device>/q<index>". Errors name the device.
  static StatusOr<std::unique_ptr<CudaStreamQueue>> Create(const std::string& device_name,
                                                           const std::string& thread_name,
                                                           int ordinal, int index,
                                                           const DeviceOptions& options);
  // Waits for every launch to be reported, then frees the stream and handle.
  ~CudaStreamQueue() override;

  Outcome Launch(const LaunchRequest& request, Status* kernel_status) override;
  void ReleaseInline() override {}  // Never launches inline.
  // One CUDA stream: work runs in launch order; said so unless the device's options turn
  // stream-ordered edges off (DeviceOptions::cuda_stream_ordered_edges, to compare).
  bool runs_in_launch_order() const override { return stream_ordered_edges_; }

  cudaStream_t stream() const { return handles_.stream; }

 private:
  CudaStreamQueue(std::string device_name, int ordinal, CudaStreamHandles handles,
                  const std::string& thread_name, bool stream_ordered_edges);

  // Enqueues the kernel between the events of a marker; the outcome goes into `pending`.
  void Enqueue(const LaunchRequest& request, PendingLaunch* pending);

  const std::string device_name_;
  const int ordinal_;
  const CudaStreamHandles handles_;
  const bool stream_ordered_edges_;
  std::mutex mutex_;  // Held while a launch is enqueued: one host thread on the stream at once.
  CudaEventPool events_;
  std::unique_ptr<CompletionThread> completions_;  // Destroyed first: drains the launches.
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_STREAM_QUEUE_H_
