// Helpers of the cuda device tests: the device they run on, or why they skip, and one kernel
// run on it against the same kernel's cpu run.
#ifndef SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_TEST_DEVICE_H_
#define SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_TEST_DEVICE_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device/cuda/cuda_device.h"
#include "runtime/kernels/testing/kernel_harness.h"

namespace softwire {
namespace runtime {

// Empty when CUDA device 0 can be used; otherwise why not ("no CUDA device: ..." for the skip
// message, with CUDA's own error).
std::string WhyNoCudaDevice();

// A plan device "node0/cuda:0".
proto::PlanDevice CudaPlanDevice();

// Records completions; Wait blocks until `count` arrived (false after 60 s).
class WaitingListener final : public LaunchListener {
 public:
  struct Completion {
    int64_t actor;
    int64_t firing;
    Status status;
  };
  void OnLaunchCompleted(int64_t actor, int64_t firing, Status status) override;
  bool Wait(size_t count);
  std::vector<Completion> completions();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Completion> completions_;
};

// Runs `harness`'s kernel (created from `cuda_kernels`) on `device`'s queue 0 for `firings`
// firings: its inputs and state copied to the device, its outputs and state copied back into
// the harness. Firing f gets KernelContext::firing f and output_fill_begins (f == 0).
Status RunOnCuda(CudaDevice* device, const KernelRegistry& cuda_kernels, KernelHarness* harness,
                 int firings = 1);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_TEST_DEVICE_H_
