#include "runtime/host/node_runtime_options.h"

#include <algorithm>
#include <thread>

#include "base/thread_affinity.h"
#include "plan/labels.h"

namespace softwire {
namespace runtime {
namespace {

// Cores for a device of `threads` kernel threads whose first thread takes allowed[first]: the
// next `threads` allowed cores, wrapping around when the process has fewer.
std::vector<int> DeviceCores(const std::vector<int>& allowed, size_t first, int threads) {
  std::vector<int> cores;
  for (int thread = 0; thread < threads; ++thread) {
    cores.push_back(allowed[(first + static_cast<size_t>(thread)) % allowed.size()]);
  }
  return cores;
}

}  // namespace

NodeRuntimeOptions NodeRuntimeOptionsFor(std::vector<DeviceSpec> devices,
                                         const HostingOptions& hosting) {
  NodeRuntimeOptions runtime;
  runtime.kernels = hosting.kernels;
  runtime.sim = hosting.sim;
  runtime.caf = hosting.caf;
  runtime.blas_threads = hosting.blas_threads;
  const std::vector<int> allowed_cores = AllowedCores();
  size_t next_core = 0;  // With pinned threads: the first core of the next cpu device.
  int cpu_devices = 0;
  const proto::PlanDevice* cpu_device = nullptr;  // The last cpu device.
  bool sim_devices = false;
  for (DeviceSpec& spec : devices) {
    spec.options = hosting.device;
    if (spec.device.kind() == proto::DEVICE_KIND_CPU) {
      ++cpu_devices;
      if (hosting.pin_threads && !allowed_cores.empty()) {
        spec.options.cores =
            DeviceCores(allowed_cores, next_core, KernelThreads(spec.device, spec.options));
        next_core += spec.options.cores.size();
        // The worker holding the device's strand is its thread 0: it runs on the same core.
        if (hosting.caf.worker_cores.empty())
          runtime.caf.worker_cores.push_back(spec.options.cores[0]);
      }
    }
    sim_devices = sim_devices || spec.device.kind() == proto::DEVICE_KIND_SIM;
    runtime.devices.push_back(std::move(spec));
  }
  for (const DeviceSpec& spec : runtime.devices) {
    if (spec.device.kind() == proto::DEVICE_KIND_CPU) cpu_device = &spec.device;
  }
  // One cpu device and one worker: that worker is always the device's thread 0.
  if (cpu_devices == 1 && CafThreads(runtime.caf, 1) == 1 && runtime.caf.worker_names.empty()) {
    runtime.caf.worker_names.push_back(plan::DeviceThreadName(*cpu_device, 0));
  }
  // The long spin only pays while the workers leave a core to the sim timer thread: with more
  // workers, those woken for the spinner's overflow take the timer's core (six workers on two
  // cores stretched 10 ms launches to 11 ms).
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (runtime.caf.worker_spin_us < 0 && sim_devices && cpu_devices == 0 &&
      runtime.caf.policy == "sharing" && CafThreads(runtime.caf, 0) < cores) {
    runtime.caf.worker_spin_us = SimOnlyWorkerSpinUs(hosting.longest_sim_launch_seconds);
  }
  return runtime;
}

std::vector<DeviceSpec> ClusterDeviceSpecs(const proto::Cluster& cluster, int queues) {
  std::vector<DeviceSpec> specs;
  for (const proto::NodeSpec& node : cluster.node()) {
    for (const proto::DeviceSpec& device : node.device()) {
      DeviceSpec spec;
      spec.device.set_id(static_cast<int32_t>(specs.size()));
      spec.device.set_node(node.name());
      spec.device.set_name(device.name());
      spec.device.set_kind(device.kind());
      spec.device.set_cores(std::max(1, device.cores()));
      spec.device.set_memory_budget(device.memory_bytes());
      spec.queues = queues;
      specs.push_back(std::move(spec));
    }
  }
  return specs;
}

}  // namespace runtime
}  // namespace softwire
