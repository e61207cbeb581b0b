#include "runtime/host/device.h"

#include <glog/logging.h>

#include "plan/labels.h"
#include "runtime/host/strand_queue.h"
#include "runtime/host/thread_pool_runner.h"

namespace softwire {
namespace runtime {

int KernelThreads(const proto::PlanDevice& plan_device, const DeviceOptions& options) {
  return options.kernel_threads > 0 ? options.kernel_threads : std::max(1, plan_device.cores());
}

std::string DeviceThreadName(const proto::PlanDevice& plan_device, int thread) {
  std::string device;
  for (char c : plan_device.name()) {
    if (c != ':') device += c;
  }
  std::string node = plan_device.node();
  if (node == "node0") {
    node.clear();
  } else if (node.rfind("node", 0) == 0) {
    node = "n" + node.substr(4);
  }
  return "sw:" + node + device + "/k" + std::to_string(thread);
}

StatusOr<std::unique_ptr<Device>> Device::Create(const proto::PlanDevice& plan_device, int queues,
                                                 const DeviceOptions& options,
                                                 LaunchListener* listener,
                                                 const std::atomic<bool>* stopping,
                                                 SimClock* sim_clock) {
  std::string name = plan::DeviceName(plan_device);
  std::unique_ptr<Device> device(new Device(name, plan_device.kind()));
  switch (plan_device.kind()) {
    case proto::DEVICE_KIND_CPU: {
      SOFTWIRE_ASSIGN_OR_RETURN(device->arena_,
                                DeviceArena::Allocate(name, plan_device.planned_bytes()));
      ThreadPoolOptions pool;
      pool.threads = KernelThreads(plan_device, options);
      pool.spin = options.spin;
      std::string first = DeviceThreadName(plan_device, 0);
      pool.thread_name_prefix = first.substr(0, first.size() - 1);
      pool.cores = options.cores;
      device->cores_ = options.cores;
      device->runner_ = std::make_unique<ThreadPoolRunner>(std::move(pool));
      device->strand_ = std::make_unique<StrandQueue>(listener, stopping);
      return device;
    }
    case proto::DEVICE_KIND_SIM: {
      if (sim_clock == nullptr) {
        return InternalError("device '" + name + "' is a sim device but the job has no sim clock");
      }
      SOFTWIRE_ASSIGN_OR_RETURN(device->arena_,
                                DeviceArena::Reserve(name, plan_device.planned_bytes()));
      device->runner_ = std::make_unique<SerialRunner>();
      for (int index = 0; index < std::max(1, queues); ++index) {
        device->sim_queues_.push_back(sim_clock->AddQueue());
      }
      return device;
    }
    default:
      return UnimplementedError("device '" + name + "' is of kind " +
                                proto::DeviceKind_Name(plan_device.kind()) +
                                "; this runtime hosts cpu and sim devices");
  }
}

Device::Device(std::string name, proto::DeviceKind kind) : name_(std::move(name)), kind_(kind) {}

Device::~Device() = default;

DeviceQueue* Device::queue(int index) const {
  if (strand_ != nullptr) return strand_.get();
  CHECK(index >= 0 && index < static_cast<int>(sim_queues_.size()))
      << "device '" << name_ << "' has no queue " << index;
  return sim_queues_[static_cast<size_t>(index)].get();
}

}  // namespace runtime
}  // namespace softwire
