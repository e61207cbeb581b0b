#include "runtime/kernels/cuda/host_staged_kernel.h"

#include <algorithm>
#include <utility>

#include "proto/tensor_desc.h"
#include "runtime/kernels/cuda/cuda_kernel_families.h"

namespace softwire {
namespace runtime {
namespace {

int64_t BytesOf(const proto::TensorDesc& desc) {
  return ShapeOf(desc).NumElements() * SizeOf(DTypeOf(desc));
}

}  // namespace

StatusOr<std::unique_ptr<Kernel>> HostStagedKernel::Create(const KernelSetup& setup,
                                                           const KernelRegistry& cpu_kernels) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> cpu_kernel,
                            CreateCpuKernel(cpu_kernels, setup));
  const proto::ActorDef& actor = *setup.actor;
  const proto::KernelDef& def = actor.kernel();
  if (actor.workspace_bytes() > 0 || actor.state_bytes() > 0) {
    return InvalidArgumentError(def.op_type() +
                                ": a host kernel on a cuda device cannot have workspace or state");
  }
  std::vector<int64_t> input_bytes;
  std::vector<int64_t> output_bytes;
  for (const proto::TensorDesc& input : def.input()) input_bytes.push_back(BytesOf(input));
  for (const proto::TensorDesc& output : def.output()) output_bytes.push_back(BytesOf(output));
  const int ring = std::max(1, actor.max_in_flight());
  return std::unique_ptr<Kernel>(
      new HostStagedKernel(def.op_type(), std::move(cpu_kernel), ring, std::move(input_bytes),
                           std::move(output_bytes), def.op_type() == "variable"));
}

HostStagedKernel::HostStagedKernel(std::string op, std::unique_ptr<Kernel> cpu_kernel, int ring,
                                   std::vector<int64_t> input_bytes,
                                   std::vector<int64_t> output_bytes,
                                   bool outputs_on_first_firing_only)
    : op_(std::move(op)),
      cpu_kernel_(std::move(cpu_kernel)),
      input_bytes_(std::move(input_bytes)),
      output_bytes_(std::move(output_bytes)),
      outputs_on_first_firing_only_(outputs_on_first_firing_only),
      ring_(static_cast<size_t>(ring)) {}

HostStagedKernel::~HostStagedKernel() {
  for (Staging& staging : ring_) {
    for (void* buffer : staging.inputs) cudaFreeHost(buffer);
    for (void* buffer : staging.outputs) cudaFreeHost(buffer);
  }
}

Status HostStagedKernel::AllocateStaging() {
  for (Staging& staging : ring_) {
    staging.owner = this;
    staging.host_context.parallel = &runner_;
    for (int64_t bytes : input_bytes_) {
      void* buffer = nullptr;
      SOFTWIRE_RETURN_IF_ERROR(CudaLaunchStatus(
          op_.c_str(), "cudaMallocHost", cudaMallocHost(&buffer, std::max<size_t>(1, bytes))));
      staging.inputs.push_back(buffer);
    }
    for (int64_t bytes : output_bytes_) {
      void* buffer = nullptr;
      SOFTWIRE_RETURN_IF_ERROR(CudaLaunchStatus(
          op_.c_str(), "cudaMallocHost", cudaMallocHost(&buffer, std::max<size_t>(1, bytes))));
      staging.outputs.push_back(buffer);
    }
  }
  allocated_ = true;
  return Status::Ok();
}

Status HostStagedKernel::Enqueue(const KernelContext& context, const CudaStreamHandles& handles) {
  // Counted first, so TakeOutcome stays in step even when this launch fails (its error is the
  // queue's to report; the staging's status then stays OK).
  Staging& staging = ring_[static_cast<size_t>(enqueued_ % static_cast<int64_t>(ring_.size()))];
  ++enqueued_;
  staging.status = Status::Ok();
  staging.run_at_outcome = false;
  // A variable's later firings write nothing (the update changed the value on the device):
  // nothing is enqueued, so the stream never stops for a host function the firing does not need.
  if (outputs_on_first_firing_only_ && context.firing != 0) return Status::Ok();
  if (!allocated_) SOFTWIRE_RETURN_IF_ERROR(AllocateStaging());
  // The host context: the firing's numbers, views over the pinned buffers.
  KernelContext& host = staging.host_context;
  host.firing = context.firing;
  host.first_piece = context.first_piece;
  host.output_fill_begins = context.output_fill_begins;
  host.output_slots = context.output_slots;
  host.inputs = context.inputs;
  host.outputs = context.outputs;
  for (size_t i = 0; i < host.inputs.size(); ++i) {
    host.inputs[i].data = staging.inputs[i];
    SOFTWIRE_RETURN_IF_ERROR(
        CudaLaunchStatus(op_.c_str(), "cudaMemcpyAsync (input to host)",
                         cudaMemcpyAsync(staging.inputs[i], context.inputs[i].data,
                                         static_cast<size_t>(input_bytes_[i]),
                                         cudaMemcpyDeviceToHost, handles.stream)));
  }
  if (host.outputs.empty()) {
    // A sink: its cpu kernel runs in TakeOutcome, once the device reached the copies, so the
    // stream never waits for the host.
    staging.run_at_outcome = true;
    return Status::Ok();
  }
  for (size_t i = 0; i < host.outputs.size(); ++i) host.outputs[i].data = staging.outputs[i];
  SOFTWIRE_RETURN_IF_ERROR(CudaLaunchStatus(
      op_.c_str(), "cudaLaunchHostFunc", cudaLaunchHostFunc(handles.stream, &RunOnHost, &staging)));
  for (size_t i = 0; i < host.outputs.size(); ++i) {
    SOFTWIRE_RETURN_IF_ERROR(
        CudaLaunchStatus(op_.c_str(), "cudaMemcpyAsync (output to device)",
                         cudaMemcpyAsync(context.outputs[i].data, staging.outputs[i],
                                         static_cast<size_t>(output_bytes_[i]),
                                         cudaMemcpyHostToDevice, handles.stream)));
  }
  return Status::Ok();
}

// On CUDA's callback thread, in stream order: no CUDA calls here (CUDA forbids them).
void HostStagedKernel::RunOnHost(void* staging_pointer) {
  Staging* staging = static_cast<Staging*>(staging_pointer);
  staging->status = staging->owner->cpu_kernel_->Run(staging->host_context);
}

Status HostStagedKernel::TakeOutcome(bool reached) {
  Staging& staging = ring_[static_cast<size_t>(taken_ % static_cast<int64_t>(ring_.size()))];
  ++taken_;
  if (staging.run_at_outcome && reached) staging.status = cpu_kernel_->Run(staging.host_context);
  return std::move(staging.status);
}

}  // namespace runtime
}  // namespace softwire
