#include "runtime/device/cuda/cuda_test_device.h"

#include <chrono>

namespace softwire {
namespace runtime {

std::string WhyNoCudaDevice() {
  Status status = CheckCudaDevice("node0/cuda:0", 0);
  return status.ok() ? std::string() : "no CUDA device: " + status.message();
}

proto::PlanDevice CudaPlanDevice() {
  proto::PlanDevice device;
  device.set_node("node0");
  device.set_name("cuda:0");
  device.set_kind(proto::DEVICE_KIND_CUDA);
  return device;
}

void WaitingListener::OnLaunchCompleted(int64_t actor, int64_t firing, Status status) {
  std::lock_guard<std::mutex> lock(mutex_);
  completions_.push_back({actor, firing, std::move(status)});
  changed_.notify_all();
}

bool WaitingListener::Wait(size_t count) {
  std::unique_lock<std::mutex> lock(mutex_);
  return changed_.wait_for(lock, std::chrono::seconds(60),
                           [&] { return completions_.size() >= count; });
}

std::vector<WaitingListener::Completion> WaitingListener::completions() {
  std::lock_guard<std::mutex> lock(mutex_);
  return completions_;
}

namespace {

int64_t Aligned(int64_t bytes) {
  return (bytes + DeviceArena::kAlignment - 1) / DeviceArena::kAlignment * DeviceArena::kAlignment;
}

}  // namespace

Status RunOnCuda(CudaDevice* device, const KernelRegistry& cuda_kernels, KernelHarness* harness,
                 int firings) {
  KernelSetup setup;
  setup.plan = &harness->plan();
  setup.actor = &harness->actor();
  SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, cuda_kernels.Create(setup));
  const int inputs = harness->actor().kernel().input_size();
  const int outputs = harness->actor().kernel().output_size();
  std::vector<TensorView> views;
  for (int i = 0; i < inputs; ++i) views.push_back(harness->input(i).View());
  for (int i = 0; i < outputs; ++i) views.push_back(harness->output(i).View());
  const int64_t state_bytes = harness->actor().state_bytes();
  std::vector<int64_t> offsets;
  int64_t total = 0;
  for (const TensorView& view : views) {
    offsets.push_back(total);
    total += Aligned(view.NumBytes());
  }
  const int64_t state_offset = total;
  total += Aligned(state_bytes);
  SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<DeviceArena> arena, device->AllocateArena(total));
  KernelContext context = device->NewKernelContext(/*queue=*/0);
  for (size_t v = 0; v < views.size(); ++v) {
    TensorView on_device = views[v];
    on_device.data = arena->base() + offsets[v];
    SOFTWIRE_RETURN_IF_ERROR(
        device->CopyFromHost(views[v].data, arena->base() + offsets[v], views[v].NumBytes()));
    (static_cast<int>(v) < inputs ? context.inputs : context.outputs).push_back(on_device);
  }
  context.output_slots.assign(static_cast<size_t>(outputs), 0);
  if (state_bytes > 0) {
    context.state = arena->base() + state_offset;
    SOFTWIRE_RETURN_IF_ERROR(
        device->CopyFromHost(harness->state().data(), arena->base() + state_offset, state_bytes));
  }
  SOFTWIRE_ASSIGN_OR_RETURN(DeviceQueue * queue, device->queue(0));
  WaitingListener listener;
  std::atomic<bool> stopping{false};
  // One context per firing in flight, as ActorBinding's ring keeps them.
  std::vector<KernelContext> contexts(static_cast<size_t>(firings), context);
  for (int firing = 0; firing < firings; ++firing) {
    KernelContext& firing_context = contexts[static_cast<size_t>(firing)];
    firing_context.firing = firing;
    firing_context.first_piece = firing;  // Period 1, as KernelHarness::Run is called here.
    firing_context.output_fill_begins.assign(static_cast<size_t>(outputs), firing == 0);
    LaunchRequest request;
    request.actor = 0;
    request.firing = firing;
    request.kernel = kernel.get();
    request.context = &firing_context;
    request.listener = &listener;
    request.stopping = &stopping;
    Status unused;
    if (queue->Launch(request, &unused) != DeviceQueue::Outcome::kDeferred) {
      return InternalError("a cuda queue ran a launch inline");
    }
  }
  if (!listener.Wait(static_cast<size_t>(firings))) {
    return DeadlineExceededError("the launches did not complete within 60 s");
  }
  for (const WaitingListener::Completion& completion : listener.completions()) {
    SOFTWIRE_RETURN_IF_ERROR(completion.status);
  }
  for (int i = 0; i < outputs; ++i) {
    const TensorView& view = views[static_cast<size_t>(inputs + i)];
    SOFTWIRE_RETURN_IF_ERROR(device->CopyToHost(
        arena->base() + offsets[static_cast<size_t>(inputs + i)], view.data, view.NumBytes()));
  }
  // Inputs an update writes in place (the weight) come back too.
  for (int i = 0; i < inputs; ++i) {
    const TensorView& view = views[static_cast<size_t>(i)];
    SOFTWIRE_RETURN_IF_ERROR(device->CopyToHost(arena->base() + offsets[static_cast<size_t>(i)],
                                                view.data, view.NumBytes()));
  }
  if (state_bytes > 0) {
    SOFTWIRE_RETURN_IF_ERROR(
        device->CopyToHost(arena->base() + state_offset, harness->state().data(), state_bytes));
  }
  return Status::Ok();
}

}  // namespace runtime
}  // namespace softwire
