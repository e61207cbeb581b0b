#include "runtime/kernels/cuda/cuda_kernel.h"

#include <string>

namespace softwire {
namespace runtime {

Status CudaKernel::Run(const KernelContext& context) {
  return FailedPreconditionError(
      "a cuda kernel runs only on a cuda device's queue (CudaKernel::Enqueue)");
}

Status CudaLaunchStatus(const char* op, const char* what, cudaError_t error) {
  if (error == cudaSuccess) return Status::Ok();
  return InternalError(std::string(op) + ": " + what + " failed: " + cudaGetErrorName(error) +
                       " (" + cudaGetErrorString(error) + ")");
}

Status CublasStatus(const CublasLibrary& cublas, const char* op, cublasStatus_t status) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return InternalError(std::string(op) + ": cuBLAS failed: " + cublas.status_name(status) + " (" +
                       cublas.status_string(status) + ")");
}

}  // namespace runtime
}  // namespace softwire
