#include "runtime/device/cuda/cuda_status.h"

namespace softwire {
namespace runtime {

std::string CudaErrorText(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

Status CudaCall(const std::string& device_name, const char* call, cudaError_t error) {
  if (error == cudaSuccess) return Status::Ok();
  std::string message =
      "device '" + device_name + "': " + call + " failed: " + CudaErrorText(error);
  if (error == cudaErrorMemoryAllocation) return ResourceExhaustedError(std::move(message));
  return InternalError(std::move(message));
}

}  // namespace runtime
}  // namespace softwire
