#include "runtime/device/sim/sim_device.h"

#include <algorithm>

#include "plan/labels.h"
#include "runtime/device/sim/sim_kernels.h"

namespace softwire {
namespace runtime {

SimDevice::SimDevice(const proto::PlanDevice& plan_device, int queues, SimClock* clock)
    : Device(plan::DeviceName(plan_device), proto::DEVICE_KIND_SIM),
      clock_(clock),
      runner_(std::make_unique<SerialRunner>()) {
  for (int index = 0; index < std::max(1, queues); ++index) queues_.push_back(clock->AddQueue());
}

SimDevice::~SimDevice() = default;

StatusOr<std::unique_ptr<DeviceArena>> SimDevice::AllocateArena(int64_t bytes) const {
  return DeviceArena::Reserve(name(), bytes);
}

Status SimDevice::CopyToHost(const char*, void*, int64_t) const {
  return UnimplementedError("device '" + name() + "' is a sim device and holds no values");
}

Status SimDevice::CopyFromHost(const void*, char*, int64_t) const {
  return UnimplementedError("device '" + name() + "' is a sim device and holds no values");
}

StatusOr<DeviceQueue*> SimDevice::queue(int index) const {
  if (index < 0 || index >= static_cast<int>(queues_.size())) {
    return InvalidArgumentError("device '" + name() + "' has no queue " + std::to_string(index) +
                                " (it has " + std::to_string(queues_.size()) + ")");
  }
  return queues_[static_cast<size_t>(index)].get();
}

void SimDevice::CancelLaunches(const std::atomic<bool>* stopping) {
  clock_->CancelLaunches(stopping);  // Also those of the clock's other devices: same run.
}

StatusOr<std::unique_ptr<Kernel>> SimDevice::CreateKernel(const KernelSetup& setup) const {
  StatusOr<std::unique_ptr<Kernel>> kernel = CreateSimKernel(setup);
  if (!kernel.ok()) return kernel.status().WithContext(plan::ActorLabel(setup.actor->name()));
  return kernel;
}

KernelContext SimDevice::NewKernelContext(int /*queue*/) const {
  KernelContext context;
  context.parallel = runner_.get();
  context.device = this;
  return context;
}

}  // namespace runtime
}  // namespace softwire
