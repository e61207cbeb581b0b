// CudaKernel: a kernel of a cuda device. It does not compute on the calling thread: Enqueue puts
// the firing's work on the stream of the actor's queue and returns; the queue records an event
// behind it and reports the completion when the event is reached (runtime/device/cuda/).
//
// Enqueue is called on a host thread holding the queue's lock, so the stream and cuBLAS handle
// it is given are used by one thread at a time. A kernel never synchronizes the stream or the
// device, and never allocates device memory: its views, KernelContext::workspace and ::state
// are device addresses in the plan's arena.
//
// Failure: Enqueue returns an error when the work could not be enqueued (a CUDA launch error,
// named with the op). Errors the device finds while running the work surface at the launch's
// event (the queue's completion). Kernels cannot fail on bad data the way cpu kernels do (a
// label out of range): they write NaN instead, as docs/CUDA.md says per op.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_KERNEL_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_KERNEL_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "base/status.h"
#include "runtime/kernels/cuda/cublas_library.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

// What a cuda kernel enqueues its work with: the queue's stream and its cuBLAS handle (bound to
// that stream; TF32 on or off as the device's options say).
struct CudaStreamHandles {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  const CublasLibrary* cublas = nullptr;  // The functions to call `blas` with.
};

class CudaKernel : public Kernel {
 public:
  // A cuda kernel runs only through a cuda queue (Enqueue); Run says so.
  Status Run(const KernelContext& context) final;

  virtual Status Enqueue(const KernelContext& context, const CudaStreamHandles& handles) = 0;
};

// OK, or Internal "<op>: <what> failed: <CUDA error string>".
Status CudaLaunchStatus(const char* op, const char* what, cudaError_t error);
Status CublasStatus(const CublasLibrary& cublas, const char* op, cublasStatus_t status);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_KERNEL_H_
