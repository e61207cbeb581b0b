// HostStagedKernel: the host work of a cuda device (source, variable and sink actors) run by
// their cpu kernels, in stream order, with no host wait: per firing it enqueues
//   1. copies of the inputs from the device into pinned host buffers,
//   2. a host function (cudaLaunchHostFunc) that runs the cpu kernel on those buffers,
//   3. copies of the outputs from pinned host buffers to the device,
// except that a kernel without outputs (a sink) enqueues only step 1 and runs its cpu kernel
// in TakeOutcome, on the completion thread after the device reached the copies: a host
// function stops the stream until CUDA's callback thread ran it (a loss sink cost 240 us of
// stream time a step on an H200), and a sink has nothing to give back to the stream,
// so a source's micro-batch, a variable's initial value and a sink's loss cross between host
// and device on the actor's queue without a compiler pass (docs/CUDA.md, "Host work"). A
// variable runs only its first firing: later ones write nothing (the update changed the value
// on the device), so they enqueue nothing. Synthetic sources do not come here: they run on the
// device (synthetic_source_cuda_kernel.h).
//
// Memory: pinned host buffers of the actor's views, one set per firing in flight, allocated on
// the first launch (so creating the kernel needs no GPU); host memory, not the device arena.
// An actor with workspace or state is refused (the cpu kernel would need device memory).
//
// Threading: Enqueue on the queue's thread under its lock; the host function on CUDA's
// callback thread; TakeOutcome (and a sink's cpu kernel) on the completion thread after the
// launch's end event.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_HOST_STAGED_KERNEL_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_HOST_STAGED_KERNEL_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/kernels/cuda/cuda_kernel.h"
#include "runtime/kernels/cuda/launch_outcome.h"

namespace softwire {
namespace runtime {

class HostStagedKernel final : public CudaKernel, public LaunchOutcome {
 public:
  // The cpu kernel of setup.actor from `cpu_kernels`, staged. Errors: the cpu kernel's, and
  // InvalidArgument for an actor with workspace or state.
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup,
                                                  const KernelRegistry& cpu_kernels);
  ~HostStagedKernel() override;

  Status Enqueue(const KernelContext& context, const CudaStreamHandles& handles) override;
  Status TakeOutcome(bool reached) override;

 private:
  // One firing in flight: its pinned buffers, the host context over them, its result.
  struct Staging {
    HostStagedKernel* owner = nullptr;
    std::vector<void*> inputs;
    std::vector<void*> outputs;
    KernelContext host_context;
    Status status;
    bool run_at_outcome = false;  // A sink's launch whose copies were enqueued.
  };

  HostStagedKernel(std::string op, std::unique_ptr<Kernel> cpu_kernel, int ring,
                   std::vector<int64_t> input_bytes, std::vector<int64_t> output_bytes,
                   bool outputs_on_first_firing_only);
  Status AllocateStaging();
  static void RunOnHost(void* staging);

  const std::string op_;
  const std::unique_ptr<Kernel> cpu_kernel_;
  const std::vector<int64_t> input_bytes_;
  const std::vector<int64_t> output_bytes_;
  const bool outputs_on_first_firing_only_;
  SerialRunner runner_;
  std::vector<Staging> ring_;  // Firing in flight i uses ring_[launches % size].
  bool allocated_ = false;
  int64_t enqueued_ = 0;  // Launches enqueued (queue's thread).
  int64_t taken_ = 0;     // Outcomes taken (completion thread).
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_HOST_STAGED_KERNEL_H_
