#include "runtime/device/cuda/cuda_stream_queue.h"

#include <utility>

#include "runtime/device/cuda/cuda_status.h"

namespace softwire {
namespace runtime {

StatusOr<std::unique_ptr<CudaStreamQueue>> CudaStreamQueue::Create(const std::string& device_name,
                                                                   const std::string& thread_name,
                                                                   int ordinal, int index,
                                                                   const DeviceOptions& options) {
  const bool allow_tf32 = options.cuda_allow_tf32;
  CudaStreamHandles handles;
  SOFTWIRE_RETURN_IF_ERROR(
      CudaCall(device_name, "cudaStreamCreateWithFlags",
               cudaStreamCreateWithFlags(&handles.stream, cudaStreamNonBlocking)));
  StatusOr<const CublasLibrary*> cublas = CublasLibrary::Load();
  if (!cublas.ok()) {
    cudaStreamDestroy(handles.stream);
    return cublas.status().WithContext("device '" + device_name + "'");
  }
  handles.cublas = *cublas;
  const CublasLibrary& library = **cublas;
  Status blas = CublasStatus(library, "cublasCreate", library.create(&handles.blas));
  if (blas.ok()) {
    blas =
        CublasStatus(library, "cublasSetStream", library.set_stream(handles.blas, handles.stream));
  }
  if (blas.ok()) {
    // cuBLAS's default math keeps float32 products in float32; TF32 only when asked.
    blas = CublasStatus(library, "cublasSetMathMode",
                        library.set_math_mode(handles.blas, allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                                       : CUBLAS_DEFAULT_MATH));
  }
  if (!blas.ok()) {
    if (handles.blas != nullptr) library.destroy(handles.blas);
    cudaStreamDestroy(handles.stream);
    return blas.WithContext("device '" + device_name + "' queue " + std::to_string(index));
  }
  return std::unique_ptr<CudaStreamQueue>(new CudaStreamQueue(
      device_name, ordinal, handles, thread_name, options.cuda_stream_ordered_edges));
}

CudaStreamQueue::CudaStreamQueue(std::string device_name, int ordinal, CudaStreamHandles handles,
                                 const std::string& thread_name, bool stream_ordered_edges)
    : device_name_(std::move(device_name)),
      ordinal_(ordinal),
      handles_(handles),
      stream_ordered_edges_(stream_ordered_edges),
      events_(device_name_, ordinal),
      completions_(std::make_unique<CompletionThread>(thread_name, &events_)) {}

CudaStreamQueue::~CudaStreamQueue() {
  completions_.reset();  // Every launch reported; no event still in use.
  cudaSetDevice(ordinal_);
  handles_.cublas->destroy(handles_.blas);
  cudaStreamDestroy(handles_.stream);
}

DeviceQueue::Outcome CudaStreamQueue::Launch(const LaunchRequest& request, Status* kernel_status) {
  PendingLaunch pending;
  pending.actor = request.actor;
  pending.firing = request.firing;
  pending.listener = request.listener;
  pending.times = request.times;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (request.stopping->load(std::memory_order_acquire)) {
      pending.status = CancelledError("the job is stopping");
    } else {
      Enqueue(request, &pending);
    }
    // Added under the lock: the completion order is the stream's order.
    completions_->Add(std::move(pending));
  }
  return Outcome::kDeferred;
}

void CudaStreamQueue::Enqueue(const LaunchRequest& request, PendingLaunch* pending) {
  auto* kernel = dynamic_cast<CudaKernel*>(request.kernel);
  if (kernel == nullptr) {
    pending->status = FailedPreconditionError(
        "device '" + device_name_ + "': firing " + std::to_string(request.firing) + " of actor " +
        std::to_string(request.actor) +
        " has a host kernel, which a cuda queue cannot run (docs/CUDA.md, host work)");
    return;
  }
  // CAF workers launch from any thread; the current device is per thread.
  pending->status = CudaCall(device_name_, "cudaSetDevice", cudaSetDevice(ordinal_));
  if (!pending->status.ok()) return;
  StatusOr<CudaEventPair*> pair = events_.Acquire();
  if (!pair.ok()) {
    pending->status = pair.status();
    return;
  }
  pending->status =
      CudaCall(device_name_, "cudaEventRecord", cudaEventRecord((*pair)->start, handles_.stream));
  if (pending->status.ok()) {
    pending->status = kernel->Enqueue(*request.context, handles_);
    pending->outcome = dynamic_cast<LaunchOutcome*>(kernel);
  }
  Status recorded =
      CudaCall(device_name_, "cudaEventRecord", cudaEventRecord((*pair)->end, handles_.stream));
  if (!recorded.ok()) {
    events_.Recycle(*pair);
    if (pending->status.ok()) pending->status = std::move(recorded);
    return;
  }
  pending->marker = *pair;  // Waited for even after a failed Enqueue: the stream stays ordered.
}

}  // namespace runtime
}  // namespace softwire
