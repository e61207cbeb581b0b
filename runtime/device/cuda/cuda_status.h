// How the cuda device turns CUDA runtime errors into Status: the device's name, the call and
// CUDA's own name and text for the error, e.g. "device 'node0/cuda:0': cudaMalloc failed:
// cudaErrorMemoryAllocation (out of memory)".
#ifndef SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_STATUS_H_
#define SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include <string>

#include "base/status.h"

namespace softwire {
namespace runtime {

// OK for cudaSuccess; otherwise Internal (ResourceExhausted for cudaErrorMemoryAllocation).
Status CudaCall(const std::string& device_name, const char* call, cudaError_t error);

// "cudaErrorNoDevice (no CUDA-capable device is detected)".
std::string CudaErrorText(cudaError_t error);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_STATUS_H_
