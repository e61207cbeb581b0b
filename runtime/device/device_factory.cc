#include "runtime/device/device_factory.h"

#include "plan/labels.h"
#include "runtime/device/cpu/cpu_device.h"
#include "runtime/device/sim/sim_device.h"

#if SOFTWIRE_HAVE_CUDA
#include "runtime/device/cuda/cuda_device.h"
#endif

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

#if SOFTWIRE_HAVE_CUDA
StatusOr<std::unique_ptr<Device>> CreateCudaDevice(const DeviceSpec& spec,
                                                   const DeviceEnvironment& environment) {
  SOFTWIRE_ASSIGN_OR_RETURN(
      std::unique_ptr<CudaDevice> device,
      CudaDevice::Create(spec.device, spec.queues, spec.options, environment.kernels.cuda));
  return std::unique_ptr<Device>(std::move(device));
}
#endif

// "cpu and sim devices" (and "cuda" where built), for the error of a kind not hosted.
constexpr const char* kHostedKinds =
#if SOFTWIRE_HAVE_CUDA
    "cpu, sim and cuda devices";
#else
    "cpu and sim devices (this build has no CUDA: the toolkit was not found or SOFTWIRE_CUDA=OFF)";
#endif

struct DeviceKindEntry {
  proto::DeviceKind kind;
  StatusOr<std::unique_ptr<Device>> (*create)(const DeviceSpec&, const DeviceEnvironment&);
};

// Every kind this build hosts. Optional kinds go under their build flag here, and only here
// (a cuda row under `#if SOFTWIRE_HAVE_CUDA`).
constexpr DeviceKindEntry kDeviceKinds[] = {
    {proto::DEVICE_KIND_CPU, &CreateCpuDevice},
    {proto::DEVICE_KIND_SIM, &CreateSimDevice},
#if SOFTWIRE_HAVE_CUDA
    {proto::DEVICE_KIND_CUDA, &CreateCudaDevice},
#endif
};

}  // namespace

StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceSpec& spec,
                                               const DeviceEnvironment& environment) {
  for (const DeviceKindEntry& entry : kDeviceKinds) {
    if (entry.kind == spec.device.kind()) return entry.create(spec, environment);
  }
  return UnimplementedError("device '" + plan::DeviceName(spec.device) + "' is of kind " +
                            proto::DeviceKind_Name(spec.device.kind()) + "; this runtime hosts " +
                            kHostedKinds);
}

}  // namespace runtime
}  // namespace softwire
