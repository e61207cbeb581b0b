// CpuDevice: a device whose kernels run on this machine's cores (device.h explains the kinds).
// Its memory is host memory: an arena is one zero-filled allocation, and copies to and from the
// host are memcpy. It has two strands (strand_queue.h): the compute queue's (index 0), whose
// kernels spread loops over kernel threads of its own (thread_pool_runner.h), named
// "sw:cpu0/k1" and pinned to DeviceOptions::cores when given; and one that every copy queue
// (index >= 1) maps onto, whose kernels (copies, slices, sends, recvs) run serially on the
// thread that holds it, so they go on beside a compute kernel without taking its cores
// (docs/DECISIONS.md 37). Its kernels come from the cpu kernel registry it is given.
//
// Threading: Device's. Ownership: borrows the kernel registry, which must outlive the device.
#ifndef SOFTWIRE_RUNTIME_DEVICE_CPU_CPU_DEVICE_H_
#define SOFTWIRE_RUNTIME_DEVICE_CPU_CPU_DEVICE_H_

#include <memory>
#include <vector>

#include "runtime/device/device.h"

namespace softwire {
namespace runtime {

class CpuDevice final : public Device {
 public:
  // Starts the kernel threads. `kernels` may be null: CreateKernel is then Unimplemented.
  CpuDevice(const proto::PlanDevice& plan_device, const DeviceOptions& options,
            const KernelRegistry* kernels);
  ~CpuDevice() override;

  StatusOr<std::unique_ptr<DeviceArena>> AllocateArena(int64_t bytes) const override;
  Status CopyToHost(const char* device_source, void* host_destination,
                    int64_t bytes) const override;
  Status CopyFromHost(const void* host_source, char* device_destination,
                      int64_t bytes) const override;
  StatusOr<DeviceQueue*> queue(int index) const override;
  StatusOr<std::unique_ptr<Kernel>> CreateKernel(const KernelSetup& setup) const override;
  KernelContext NewKernelContext(int queue) const override;
  int kernel_threads() const override;
  const std::vector<int>& cores() const override { return cores_; }

 private:
  const KernelRegistry* const kernels_;
  const std::vector<int> cores_;
  std::unique_ptr<ParallelRunner> runner_;  // The compute strand's kernel threads.
  std::unique_ptr<ParallelRunner> serial_;  // The copy strand's: its holder alone.
  std::unique_ptr<DeviceQueue> compute_strand_;
  std::unique_ptr<DeviceQueue> copy_strand_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CPU_CPU_DEVICE_H_
