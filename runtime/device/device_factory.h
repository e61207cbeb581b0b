// CreateDevice: the one place that maps a device kind to its implementation (device.h).
//
//   DeviceEnvironment environment;
//   environment.kernels.cpu = &cpu_kernels;
//   StatusOr<std::unique_ptr<Device>> device = CreateDevice(spec, environment);
//
// Adding a kind adds a folder beside cpu/ and sim/, one row to the table in device_factory.cc
// (under #if where the kind is optional, the only #if for device kinds in the tree), what the
// kind shares with its siblings to DeviceEnvironment, and its CMake.
//
// Threading: CreateDevice is thread-compatible. Failure: Unimplemented for a kind this build
// cannot host; InvalidArgument for a spec the kind cannot take; FailedPrecondition for a cuda
// device on a machine without a CUDA driver or GPU ("no CUDA driver: ...").
#ifndef SOFTWIRE_RUNTIME_DEVICE_DEVICE_FACTORY_H_
#define SOFTWIRE_RUNTIME_DEVICE_DEVICE_FACTORY_H_

#include <memory>

#include "base/status.h"
#include "proto/plan.pb.h"
#include "runtime/device/device.h"
#include "runtime/device/sim/sim_clock.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

// The kernel registry of each kind that runs real kernels. Borrowed; outlive the devices.
struct KernelRegistries {
  const KernelRegistry* cpu = nullptr;
  // Null: each cuda device registers the cuda kernels in a registry of its own (cuda_device.h),
  // so no runtime needs an #if to host one.
  const KernelRegistry* cuda = nullptr;
};

// One device to create: the plan's description of it (name, node, kind, cores), how many queue
// indices its actors use, and how its threads run.
struct DeviceSpec {
  proto::PlanDevice device;
  int queues = 1;
  DeviceOptions options;
};

// What the devices of one runtime share. Borrowed; outlives the devices.
struct DeviceEnvironment {
  KernelRegistries kernels;
  // The timer of every sim device; needed (non-null) only to create one.
  SimClock* sim_clock = nullptr;
};

StatusOr<std::unique_ptr<Device>> CreateDevice(const DeviceSpec& spec,
                                               const DeviceEnvironment& environment);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_DEVICE_FACTORY_H_
