// NodeRuntimeOptionsFor: the NodeRuntime settings that host a given set of devices. One place
// decides, for a runtime made for one plan (runtime::Job) and for one that outlives its jobs
// (the job service's, made from a cluster), how kernel threads are pinned, what the CAF workers
// are named and how long they spin.
//
//   HostingOptions hosting;
//   hosting.kernels.cpu = &cpu_kernels;
//   NodeRuntimeOptions options = NodeRuntimeOptionsFor(specs, hosting);
//   StatusOr<std::unique_ptr<NodeRuntime>> runtime = NodeRuntime::Create(std::move(options));
//
// Pure function.
#ifndef SOFTWIRE_RUNTIME_HOST_NODE_RUNTIME_OPTIONS_H_
#define SOFTWIRE_RUNTIME_HOST_NODE_RUNTIME_OPTIONS_H_

#include <vector>

#include "proto/cluster.pb.h"
#include "proto/plan.pb.h"
#include "runtime/device/device.h"
#include "runtime/device/device_factory.h"
#include "runtime/device/sim/sim_clock.h"
#include "runtime/host/caf_options.h"
#include "runtime/host/node_runtime.h"

namespace softwire {
namespace runtime {

// How the devices of a runtime run, whatever they are.
struct HostingOptions {
  CafOptions caf;
  // Every device's options (kernel threads, spin); cores are filled in when pinning.
  DeviceOptions device;
  KernelRegistries kernels;
  SimClockOptions sim;
  // Pin every kernel thread of the cpu devices, and the CAF workers, each to one core: device
  // after device, thread after thread, over the cores the process may use (wrapping around
  // when the devices have more threads than there are cores).
  bool pin_threads = false;
  // BLAS's own pool (NodeRuntimeOptions::blas_threads).
  int blas_threads = 0;
  // The longest launch of a sim device, seconds (ActorDef.estimated_seconds); tunes how long
  // the CAF workers of a sim-only runtime spin. 0: not known.
  double longest_sim_launch_seconds = 0;
};

// `devices`: what to host, each with its PlanDevice (name, node, kind, cores) and queue count;
// their options are replaced by `hosting.device` (with cores when pinning).
NodeRuntimeOptions NodeRuntimeOptionsFor(std::vector<DeviceSpec> devices,
                                         const HostingOptions& hosting);

// Every device of `cluster`, in its order, as a runtime hosting them sees it: PlanDevice id,
// node, name, kind, cores and memory budget, with `queues` queues each (the compiler's plans
// use queue 0 for compute and 1 for copies).
std::vector<DeviceSpec> ClusterDeviceSpecs(const proto::Cluster& cluster, int queues = 2);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_NODE_RUNTIME_OPTIONS_H_
