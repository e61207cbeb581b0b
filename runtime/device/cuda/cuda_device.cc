#include "runtime/device/cuda/cuda_device.h"

#include <algorithm>
#include <cstdlib>

#include "plan/labels.h"
#include "runtime/device/cuda/cuda_status.h"
#include "runtime/kernels/cuda/cuda_kernels.h"

namespace softwire {
namespace runtime {

StatusOr<int> CudaOrdinal(const proto::PlanDevice& plan_device) {
  const std::string& name = plan_device.name();
  const std::string prefix = "cuda:";
  if (name.compare(0, prefix.size(), prefix) == 0 && name.size() > prefix.size() &&
      name.size() - prefix.size() <= 4 &&
      std::all_of(name.begin() + prefix.size(), name.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    return std::atoi(name.c_str() + prefix.size());
  }
  return InvalidArgumentError("device '" + plan::DeviceName(plan_device) +
                              "' is a cuda device but its name is not 'cuda:<ordinal>'");
}

Status CheckCudaDevice(const std::string& device_name, int ordinal) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  const std::string what = "device '" + device_name + "' cannot be created: ";
  if (error == cudaErrorNoDevice) {
    return FailedPreconditionError(what + "no CUDA device: " + CudaErrorText(error));
  }
  if (error != cudaSuccess) {
    return FailedPreconditionError(what + "no CUDA driver: " + CudaErrorText(error));
  }
  if (ordinal >= count) {
    return FailedPreconditionError(what + "this machine has " + std::to_string(count) +
                                   " CUDA device(s), so no device " + std::to_string(ordinal));
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Create(const proto::PlanDevice& plan_device,
                                                         int queues, const DeviceOptions& options,
                                                         const KernelRegistry* kernels) {
  const std::string name = plan::DeviceName(plan_device);
  SOFTWIRE_ASSIGN_OR_RETURN(int ordinal, CudaOrdinal(plan_device));
  SOFTWIRE_RETURN_IF_ERROR(CheckCudaDevice(name, ordinal));
  SOFTWIRE_RETURN_IF_ERROR(CudaCall(name, "cudaSetDevice", cudaSetDevice(ordinal)));
  std::unique_ptr<CudaDevice> device(new CudaDevice(plan_device, ordinal, kernels));
  const std::string thread_prefix = "sw:cuda" + std::to_string(ordinal) + "/q";
  for (int index = 0; index < std::max(1, queues); ++index) {
    SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<CudaStreamQueue> queue,
                              CudaStreamQueue::Create(name, thread_prefix + std::to_string(index),
                                                      ordinal, index, options));
    device->queues_.push_back(std::move(queue));
  }
  return device;
}

CudaDevice::CudaDevice(const proto::PlanDevice& plan_device, int ordinal,
                       const KernelRegistry* kernels)
    : Device(plan::DeviceName(plan_device), proto::DEVICE_KIND_CUDA),
      ordinal_(ordinal),
      kernels_(kernels),
      runner_(std::make_unique<SerialRunner>()) {
  if (kernels_ == nullptr) {
    own_kernels_ = std::make_unique<KernelRegistry>();
    RegisterCudaKernels(own_kernels_.get());
    kernels_ = own_kernels_.get();
  }
}

CudaDevice::~CudaDevice() {
  queues_.clear();  // Each waits for its launches to be reported.
}

StatusOr<std::unique_ptr<DeviceArena>> CudaDevice::AllocateArena(int64_t bytes) const {
  if (bytes < 0) {
    return InvalidArgumentError("device '" + name() + "': planned bytes " + std::to_string(bytes) +
                                " is negative");
  }
  SOFTWIRE_RETURN_IF_ERROR(CudaCall(name(), "cudaSetDevice", cudaSetDevice(ordinal_)));
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  SOFTWIRE_RETURN_IF_ERROR(
      CudaCall(name(), "cudaMemGetInfo", cudaMemGetInfo(&free_bytes, &total_bytes)));
  if (static_cast<uint64_t>(bytes) > free_bytes) {
    return ResourceExhaustedError("device '" + name() + "': the plan needs an arena of " +
                                  std::to_string(bytes) + " bytes, more than the " +
                                  std::to_string(free_bytes) + " bytes free of its " +
                                  std::to_string(total_bytes));
  }
  void* base = nullptr;
  if (bytes > 0) {
    SOFTWIRE_RETURN_IF_ERROR(
        CudaCall(name(), "cudaMalloc", cudaMalloc(&base, static_cast<size_t>(bytes))));
    Status zeroed = CudaCall(name(), "cudaMemset", cudaMemset(base, 0, static_cast<size_t>(bytes)));
    if (zeroed.ok()) zeroed = CudaCall(name(), "cudaDeviceSynchronize", cudaDeviceSynchronize());
    if (!zeroed.ok()) {
      cudaFree(base);
      return zeroed;
    }
  }
  const int ordinal = ordinal_;
  return DeviceArena::Adopt(name(), static_cast<char*>(base), bytes, [ordinal](char* memory) {
    if (memory == nullptr) return;
    cudaSetDevice(ordinal);
    cudaFree(memory);
  });
}

Status CudaDevice::CopyToHost(const char* device_source, void* host_destination,
                              int64_t bytes) const {
  SOFTWIRE_RETURN_IF_ERROR(CudaCall(name(), "cudaSetDevice", cudaSetDevice(ordinal_)));
  return CudaCall(name(), "cudaMemcpy (device to host)",
                  cudaMemcpy(host_destination, device_source, static_cast<size_t>(bytes),
                             cudaMemcpyDeviceToHost));
}

Status CudaDevice::CopyFromHost(const void* host_source, char* device_destination,
                                int64_t bytes) const {
  SOFTWIRE_RETURN_IF_ERROR(CudaCall(name(), "cudaSetDevice", cudaSetDevice(ordinal_)));
  return CudaCall(name(), "cudaMemcpy (host to device)",
                  cudaMemcpy(device_destination, host_source, static_cast<size_t>(bytes),
                             cudaMemcpyHostToDevice));
}

StatusOr<DeviceQueue*> CudaDevice::queue(int index) const {
  if (index < 0 || index >= static_cast<int>(queues_.size())) {
    return InvalidArgumentError("device '" + name() + "' has no queue " + std::to_string(index) +
                                " (it has " + std::to_string(queues_.size()) + ")");
  }
  return queues_[static_cast<size_t>(index)].get();
}

StatusOr<std::unique_ptr<Kernel>> CudaDevice::CreateKernel(const KernelSetup& setup) const {
  StatusOr<std::unique_ptr<Kernel>> kernel = kernels_->Create(setup);  // Names op and actor.
  if (!kernel.ok()) return kernel.status().WithContext("device '" + name() + "'");
  return kernel;
}

KernelContext CudaDevice::NewKernelContext(int /*queue*/) const {
  KernelContext context;
  context.parallel = runner_.get();
  context.device = this;
  return context;
}

}  // namespace runtime
}  // namespace softwire
