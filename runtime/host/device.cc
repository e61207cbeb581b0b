#include "runtime/host/device.h"

#include "runtime/host/strand_queue.h"
#include "runtime/host/thread_pool_runner.h"

namespace softwire {
namespace runtime {

std::string DeviceDisplayName(const proto::PlanDevice& plan_device) {
  if (plan_device.node().empty()) return plan_device.name();
  return plan_device.node() + "/" + plan_device.name();
}

StatusOr<std::unique_ptr<Device>> Device::Create(const proto::PlanDevice& plan_device,
                                                 const DeviceOptions& options,
                                                 LaunchListener* listener,
                                                 const std::atomic<bool>* stopping) {
  std::string name = DeviceDisplayName(plan_device);
  if (plan_device.kind() != proto::DEVICE_KIND_CPU) {
    return UnimplementedError("device '" + name + "' is of kind " +
                              proto::DeviceKind_Name(plan_device.kind()) +
                              "; this runtime hosts cpu devices only");
  }
  std::unique_ptr<Device> device(new Device(name, plan_device.kind()));
  SOFTWIRE_ASSIGN_OR_RETURN(device->arena_,
                            DeviceArena::Allocate(name, plan_device.planned_bytes()));
  int threads =
      options.kernel_threads > 0 ? options.kernel_threads : std::max(1, plan_device.cores());
  device->runner_ = std::make_unique<ThreadPoolRunner>(threads, options.spin);
  device->strand_ = std::make_unique<StrandQueue>(listener, stopping);
  return device;
}

Device::Device(std::string name, proto::DeviceKind kind) : name_(std::move(name)), kind_(kind) {}

Device::~Device() = default;

DeviceQueue* Device::queue(int index) const {
  return strand_.get();
}

}  // namespace runtime
}  // namespace softwire
