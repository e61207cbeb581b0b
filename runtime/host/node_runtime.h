// NodeRuntime: what one process of a node keeps for as long as it lives: the CAF actor system,
// the devices it hosts (with their queues and kernel threads), and the sim clock of its sim
// devices. Plans come and go on it: Host loads one (a HostedPlan, which claims the devices it
// uses), an Execution runs a hosted plan once, and several hosted plans of different jobs may
// run at once on disjoint devices.
//
//   NodeRuntimeOptions options;
//   options.devices = ...;            // one DeviceSpec per device this node hosts
//   options.kernels.cpu = &cpu_kernels;
//   StatusOr<std::unique_ptr<NodeRuntime>> runtime = NodeRuntime::Create(std::move(options));
//   StatusOr<std::unique_ptr<HostedPlan>> hosted = (*runtime)->Host(plan);
//   StatusOr<std::unique_ptr<Execution>> run = Execution::Create(runtime->get(), hosted->get(),
//   {}); Status status = (*run)->Run();
//
// Failure: Create fails when a device cannot be created (Unimplemented for a kind this build
// cannot host) or CAF cannot be configured. Threading: Create and the destructor on one thread;
// everything else thread-safe. Ownership: hosted plans and executions borrow the runtime and
// must be destroyed before it.
#ifndef SOFTWIRE_RUNTIME_HOST_NODE_RUNTIME_H_
#define SOFTWIRE_RUNTIME_HOST_NODE_RUNTIME_H_

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/messages.h"
#include "base/mutex.h"
#include "base/status.h"
#include "data/data_root.h"
#include "proto/plan.pb.h"
#include "runtime/device/device.h"
#include "runtime/device/device_factory.h"
#include "runtime/device/sim/sim_clock.h"
#include "runtime/host/caf_options.h"

namespace softwire {
namespace runtime {

class HostedPlan;

struct NodeRuntimeOptions {
  // The devices this node hosts, by name ("node0/cpu:0"); a sim device's spec says how many
  // queues it has.
  std::vector<DeviceSpec> devices;
  KernelRegistries kernels;
  // CAF scheduler settings; the worker count derives from the cpu devices (caf_options.h).
  CafOptions caf;
  // The timer of the sim devices.
  SimClockOptions sim;
  // Threads of BLAS's own pool, set when the runtime has cpu devices (process-wide). 0: none,
  // every BLAS call runs on the device thread that makes it (RunBlasOnCallingThreads; the
  // devices' kernels spread products over their threads, docs/RUNTIME.md "Threads"); > 0:
  // OpenBLAS's pool with that many threads, for comparisons; < 0: leave BLAS as it is.
  int blas_threads = 0;
};

class NodeRuntime {
 public:
  static StatusOr<std::unique_ptr<NodeRuntime>> Create(NodeRuntimeOptions options);
  // Every hosted plan is gone. Stops the sim clock, then the actor system, then the devices.
  ~NodeRuntime();
  NodeRuntime(const NodeRuntime&) = delete;
  NodeRuntime& operator=(const NodeRuntime&) = delete;

  // Loads `plan`'s share for `node` (every device of the plan when empty) and binds it: a
  // hosted plan ready to run (HostedPlan::Load, then Bind). `plan` is borrowed and must outlive
  // the hosted plan. Its data paths resolve under `data_root` (HostedPlan::Load).
  StatusOr<std::unique_ptr<HostedPlan>> Host(const proto::Plan& plan, const std::string& node = "",
                                             const data::DataRoot& data_root = {});

  caf::actor_system& system() { return *system_; }
  const std::vector<std::unique_ptr<Device>>& devices() const { return devices_; }
  // The device named `name`; null when this runtime does not host it.
  Device* FindDevice(const std::string& name) const;
  // How exactly sim launches kept their durations (zero without sim devices).
  SimClockStats sim_stats() const;

  // A job id no other job of this runtime has had (1, 2, ...).
  actors::JobId NewJobId();
  // Claims `device` for `job`: FailedPrecondition naming both jobs when another job holds it.
  // Release gives back every device `job` holds.
  Status Claim(const std::string& device, actors::JobId job);
  void Release(actors::JobId job);

 private:
  explicit NodeRuntime(NodeRuntimeOptions options);

  const NodeRuntimeOptions options_;
  // Declared before the devices, whose queues borrow it. Null without sim devices.
  std::unique_ptr<SimClock> sim_clock_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::map<std::string, Device*> devices_by_name_;
  HostCafConfig config_;  // Outlives the system, which keeps a reference.
  std::unique_ptr<caf::actor_system> system_;
  caf::actor wake_target_;  // Null without sim devices.
  Mutex mutex_;
  actors::JobId last_job_ GUARDED_BY(mutex_) = 0;
  std::map<std::string, actors::JobId> claimed_by_ GUARDED_BY(mutex_);
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_NODE_RUNTIME_H_
