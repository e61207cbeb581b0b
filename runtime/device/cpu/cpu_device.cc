#include "runtime/device/cpu/cpu_device.h"

#include <cstring>

#include "plan/labels.h"
#include "runtime/device/cpu/strand_queue.h"
#include "runtime/device/cpu/thread_pool_runner.h"

namespace softwire {
namespace runtime {
namespace {

std::unique_ptr<ParallelRunner> StartKernelThreads(const proto::PlanDevice& plan_device,
                                                   const DeviceOptions& options) {
  ThreadPoolOptions pool;
  pool.threads = KernelThreads(plan_device, options);
  pool.spin = options.spin;
  std::string first = plan::DeviceThreadName(plan_device, 0);
  pool.thread_name_prefix = first.substr(0, first.size() - 1);
  pool.cores = options.cores;
  return std::make_unique<ThreadPoolRunner>(std::move(pool));
}

}  // namespace

CpuDevice::CpuDevice(const proto::PlanDevice& plan_device, const DeviceOptions& options,
                     const KernelRegistry* kernels)
    : Device(plan::DeviceName(plan_device), proto::DEVICE_KIND_CPU),
      kernels_(kernels),
      cores_(options.cores),
      runner_(StartKernelThreads(plan_device, options)),
      serial_(std::make_unique<SerialRunner>()),
      compute_strand_(std::make_unique<StrandQueue>()),
      copy_strand_(std::make_unique<StrandQueue>()) {}

CpuDevice::~CpuDevice() = default;

StatusOr<std::unique_ptr<DeviceArena>> CpuDevice::AllocateArena(int64_t bytes) const {
  return DeviceArena::Allocate(name(), bytes);
}

Status CpuDevice::CopyToHost(const char* device_source, void* host_destination,
                             int64_t bytes) const {
  std::memcpy(host_destination, device_source, static_cast<size_t>(bytes));
  return Status::Ok();
}

Status CpuDevice::CopyFromHost(const void* host_source, char* device_destination,
                               int64_t bytes) const {
  std::memcpy(device_destination, host_source, static_cast<size_t>(bytes));
  return Status::Ok();
}

StatusOr<DeviceQueue*> CpuDevice::queue(int index) const {
  if (index < 0) {
    return InvalidArgumentError("device '" + name() + "' has no queue " + std::to_string(index));
  }
  return index == 0 ? compute_strand_.get() : copy_strand_.get();
}

StatusOr<std::unique_ptr<Kernel>> CpuDevice::CreateKernel(const KernelSetup& setup) const {
  if (kernels_ == nullptr) {
    return UnimplementedError(plan::ActorLabel(setup.actor->name()) + ": no kernels for device '" +
                              name() + "'");
  }
  return kernels_->Create(setup);
}

KernelContext CpuDevice::NewKernelContext(int queue) const {
  KernelContext context;
  context.parallel = queue == 0 ? runner_.get() : serial_.get();
  context.device = this;
  return context;
}

int CpuDevice::kernel_threads() const {
  return runner_->threads();
}

}  // namespace runtime
}  // namespace softwire
