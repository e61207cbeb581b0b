// LaunchKernel: a cuda kernel that is one function enqueuing its work, for ops whose work is
// one or two launcher calls (cuda_launchers.h). The function is made once, when the kernel is
// created, with every number it needs captured.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_LAUNCH_KERNEL_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_LAUNCH_KERNEL_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "runtime/kernels/cuda/cuda_kernel.h"

namespace softwire {
namespace runtime {

using EnqueueFunction = std::function<cudaError_t(const KernelContext&, cudaStream_t)>;

class LaunchKernel final : public CudaKernel {
 public:
  LaunchKernel(std::string op, EnqueueFunction enqueue)
      : op_(std::move(op)), enqueue_(std::move(enqueue)) {}

  Status Enqueue(const KernelContext& context, const CudaStreamHandles& handles) override {
    return CudaLaunchStatus(op_.c_str(), "kernel launch", enqueue_(context, handles.stream));
  }

 private:
  const std::string op_;
  const EnqueueFunction enqueue_;
};

inline StatusOr<std::unique_ptr<Kernel>> MakeLaunchKernel(const KernelSetup& setup,
                                                          EnqueueFunction enqueue) {
  return std::unique_ptr<Kernel>(
      new LaunchKernel(setup.actor->kernel().op_type(), std::move(enqueue)));
}

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_LAUNCH_KERNEL_H_
