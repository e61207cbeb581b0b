// SimDevice: a device that computes nothing and takes the time the plan estimates (device.h
// explains the kinds). Its arenas are reserved, not allocated (a sim device models e.g. 16 GiB):
// ranges are checked as on a real device and hold no memory, so copies to and from the host are
// Unimplemented. It has one queue per queue index, each timed by the runtime's one SimClock
// (sim_clock.h); its kernels are sim_kernels.h's, whatever the op.
//
// Threading: Device's. Ownership: borrows the clock, which must outlive the device (and be
// stopped before it dies: SimClock::Stop).
#ifndef SOFTWIRE_RUNTIME_DEVICE_SIM_SIM_DEVICE_H_
#define SOFTWIRE_RUNTIME_DEVICE_SIM_SIM_DEVICE_H_

#include <memory>
#include <vector>

#include "runtime/device/device.h"
#include "runtime/device/sim/sim_clock.h"

namespace softwire {
namespace runtime {

class SimDevice final : public Device {
 public:
  // A device with queues 0 .. queues - 1 (at least one) on `clock`.
  SimDevice(const proto::PlanDevice& plan_device, int queues, SimClock* clock);
  ~SimDevice() override;

  StatusOr<std::unique_ptr<DeviceArena>> AllocateArena(int64_t bytes) const override;
  Status CopyToHost(const char* device_source, void* host_destination,
                    int64_t bytes) const override;
  Status CopyFromHost(const void* host_source, char* device_destination,
                      int64_t bytes) const override;
  StatusOr<DeviceQueue*> queue(int index) const override;
  void CancelLaunches(const std::atomic<bool>* stopping) override;
  StatusOr<std::unique_ptr<Kernel>> CreateKernel(const KernelSetup& setup) const override;
  KernelContext NewKernelContext(int queue) const override;
  int kernel_threads() const override { return 1; }
  const std::vector<int>& cores() const override { return no_cores_; }

 private:
  SimClock* const clock_;
  std::unique_ptr<ParallelRunner> runner_;
  std::vector<std::unique_ptr<DeviceQueue>> queues_;
  const std::vector<int> no_cores_;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_SIM_SIM_DEVICE_H_
