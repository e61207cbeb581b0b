// CudaDevice: an NVIDIA GPU through the CUDA runtime (device.h explains the kinds). Built only
// where the CUDA toolkit is found (SOFTWIRE_HAVE_CUDA); docs/CUDA.md says what is built, what
// was verified and what is left.
//
// Memory: the arena of a hosted plan is one cudaMalloc of exactly its planned bytes,
// zero-filled, and nothing else is allocated per plan (cuBLAS's own workspace, a few MiB per
// queue, is allocated when the device is created). Copies to and from host memory are
// cudaMemcpy (synchronous: they are the host's reads and writes of variables between runs).
// Queues: one CudaStreamQueue per queue index, each on its own stream (queue 0 computes, copy
// queues overlap it), completing launches through events (cuda_stream_queue.h). Kernels: the
// cuda kernel registry (runtime/kernels/cuda/); an op it lacks is refused when the plan is
// loaded, naming the op, the actor and the device.
//
//   StatusOr<std::unique_ptr<CudaDevice>> device = CudaDevice::Create(plan_device, 2, options,
//                                                                     &cuda_kernels);
//
// Threading: Device's. Ownership: borrows the kernel registry when given one, or owns its own.
#ifndef SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_DEVICE_H_
#define SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/device/cuda/cuda_stream_queue.h"
#include "runtime/device/device.h"

namespace softwire {
namespace runtime {

// The CUDA device ordinal of a plan device named "cuda:N": N. InvalidArgument naming the device
// for another name.
StatusOr<int> CudaOrdinal(const proto::PlanDevice& plan_device);

// OK when this process can use CUDA device `ordinal`; otherwise FailedPrecondition naming
// `device_name` and what is missing: "no CUDA driver: ..." (no libcuda, or one too old for this
// build's runtime), "no CUDA device: ..." (a driver and no GPU), or too few devices.
Status CheckCudaDevice(const std::string& device_name, int ordinal);

class CudaDevice final : public Device {
 public:
  // A device with queues 0 .. queues - 1 (at least one). `kernels` may be null: the device then
  // registers the cuda kernels in a registry of its own. Errors: CheckCudaDevice's, and CUDA
  // errors naming the device.
  static StatusOr<std::unique_ptr<CudaDevice>> Create(const proto::PlanDevice& plan_device,
                                                      int queues, const DeviceOptions& options,
                                                      const KernelRegistry* kernels);
  ~CudaDevice() override;

  StatusOr<std::unique_ptr<DeviceArena>> AllocateArena(int64_t bytes) const override;
  Status CopyToHost(const char* device_source, void* host_destination,
                    int64_t bytes) const override;
  Status CopyFromHost(const void* host_source, char* device_destination,
                      int64_t bytes) const override;
  StatusOr<DeviceQueue*> queue(int index) const override;
  StatusOr<std::unique_ptr<Kernel>> CreateKernel(const KernelSetup& setup) const override;
  KernelContext NewKernelContext(int queue) const override;
  int kernel_threads() const override { return 1; }
  const std::vector<int>& cores() const override { return no_cores_; }

  int ordinal() const { return ordinal_; }

 private:
  CudaDevice(const proto::PlanDevice& plan_device, int ordinal, const KernelRegistry* kernels);

  const int ordinal_;
  std::unique_ptr<KernelRegistry> own_kernels_;  // When none was given.
  const KernelRegistry* kernels_;
  std::unique_ptr<ParallelRunner> runner_;  // Serial: a kernel context's runner is never null.
  std::vector<std::unique_ptr<CudaStreamQueue>> queues_;
  const std::vector<int> no_cores_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_DEVICE_H_
