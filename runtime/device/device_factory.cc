#include "runtime/device/device_factory.h"

#include "plan/labels.h"
#include "runtime/device/cpu/cpu_device.h"
#include "runtime/device/sim/sim_device.h"

namespace softwire {
namespace runtime {
namespace {

StatusOr<std::unique_ptr<Device>> CreateCpuDevice(const DeviceSpec& spec,
                                                  const DeviceEnvironment& environment) {
  return std::unique_ptr<Device>(
      std::make_unique<CpuDevice>(spec.device, spec.options, environment.kernels.cpu));
}

StatusOr<std::unique_ptr<Device>> CreateSimDevice(const DeviceSpec& spec,
                                                  const DeviceEnvironment& environment) {
  if (environment.sim_clock == nullptr) {
    return InternalError("device '" + plan::DeviceName(spec.device) +
                         "' is a sim device but the runtime has no sim clock");
  }
  return std::unique_ptr<Device>(
      std::make_unique<SimDevice>(spec.device, spec.queues, environment.sim_clock));
}

struct DeviceKindEntry {
  proto::DeviceKind kind;
  StatusOr<std::unique_ptr<Device>> (*create)(const DeviceSpec&, const DeviceEnvironment&);
};

// Every kind this build hosts. Optional kinds go under their build flag here, and only here
// (a cuda row under `#if SOFTWIRE_HAVE_CUDA`).
constexpr DeviceKindEntry kDeviceKinds[] = {
    {proto::DEVICE_KIND_CPU, &CreateCpuDevice},
    {proto::DEVICE_KIND_SIM, &CreateSimDevice},
};

}  // namespace

StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceSpec& spec,
                                               const DeviceEnvironment& environment) {
  for (const DeviceKindEntry& entry : kDeviceKinds) {
    if (entry.kind == spec.device.kind()) return entry.create(spec, environment);
  }
  return UnimplementedError("device '" + plan::DeviceName(spec.device) + "' is of kind " +
                            proto::DeviceKind_Name(spec.device.kind()) +
                            "; this runtime hosts cpu and sim devices");
}

}  // namespace runtime
}  // namespace softwire
