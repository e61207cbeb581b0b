#include "runtime/host/actor_binding.h"

#include <glog/logging.h>

#include <algorithm>

#include "plan/input_ranges.h"
#include "plan/labels.h"
#include "plan/ordering_inputs.h"
#include "proto/tensor_desc.h"
#include "runtime/host/send_kernel.h"

namespace softwire {
namespace runtime {
namespace {

StatusOr<TensorView> ViewOf(const proto::TensorDesc& desc, const std::string& what) {
  TensorView view;
  view.dtype = DTypeOf(desc);
  if (view.dtype == DType::kInvalid) {
    return InvalidArgumentError(what + ": tensor has no supported dtype (" +
                                proto::DataType_Name(desc.dtype()) + ")");
  }
  for (int64_t dim : desc.dims()) {
    if (dim < 0) return InvalidArgumentError(what + ": tensor has a negative extent");
  }
  view.shape = ShapeOf(desc);
  return view;
}

std::string RegisterName(const proto::Plan& plan, int64_t id) {
  return plan::RegisterLabel(plan.register_def(static_cast<int>(id)).name());
}

}  // namespace

StatusOr<RegisterSlots> LocateRegisterSlots(
    const proto::Plan& plan, const std::vector<std::unique_ptr<DeviceArena>>& arenas) {
  RegisterSlots slots(plan.register_def_size());
  for (const proto::RegisterDef& def : plan.register_def()) {
    std::string what = RegisterName(plan, def.id());
    if (def.device() < 0 || def.device() >= static_cast<int>(arenas.size())) {
      return InvalidArgumentError(what + ": device " + std::to_string(def.device()) +
                                  " does not exist");
    }
    if (arenas[def.device()] == nullptr) continue;  // Another node's.
    SOFTWIRE_ASSIGN_OR_RETURN(TensorView view, ViewOf(def.tensor(), what));
    if (view.NumBytes() > def.bytes_per_slot()) {
      return InvalidArgumentError(what + ": a slot of " + std::to_string(def.bytes_per_slot()) +
                                  " bytes cannot hold its " + std::to_string(view.NumBytes()) +
                                  "-byte tensor");
    }
    if (def.slots() < 1) return InvalidArgumentError(what + ": has no slots");
    const DeviceArena& arena = *arenas[def.device()];
    SOFTWIRE_ASSIGN_OR_RETURN(char* first,
                              arena.Region(def.offset(), def.bytes_per_slot() * def.slots(), what));
    for (int slot = 0; slot < def.slots(); ++slot) {
      // A sim device's arena holds no memory: its slots have no address.
      slots[def.id()].push_back(first == nullptr ? nullptr : first + slot * def.bytes_per_slot());
    }
  }
  return slots;
}

namespace {

// The view kernel `def` sees of its `index`-th input or output: the kernel's own descriptor
// when the plan gives one, else the register's; never larger than the slot.
StatusOr<TensorView> KernelView(const proto::Plan& plan, const proto::ActorDef& def, bool input,
                                int index) {
  int64_t register_id = input ? def.input_register(index) : def.output_register(index);
  const proto::RegisterDef& register_def = plan.register_def(static_cast<int>(register_id));
  const auto& kernel_descs = input ? def.kernel().input() : def.kernel().output();
  std::string what = plan::ActorLabel(def.name()) + ": " + (input ? "input " : "output ") +
                     std::to_string(index) + " (" + RegisterName(plan, register_id) + ")";
  const proto::TensorDesc& desc =
      kernel_descs.size() == (input ? plan::KernelInputCount(def) : def.output_register_size())
          ? kernel_descs.Get(index)
          : register_def.tensor();
  SOFTWIRE_ASSIGN_OR_RETURN(TensorView view, ViewOf(desc, what));
  // A range view starts at an offset into the slot (plan/input_ranges.h).
  const int64_t offset = input ? plan::InputOffset(def, index) : 0;
  if (offset < 0 || view.NumBytes() > register_def.bytes_per_slot() - offset) {
    return InvalidArgumentError(what + ": the kernel's " + std::to_string(view.NumBytes()) +
                                "-byte tensor at byte " + std::to_string(offset) +
                                " does not fit the register's " +
                                std::to_string(register_def.bytes_per_slot()) + "-byte slots");
  }
  return view;
}

// The addresses kernel input `index` of `def` reads in each slot: the slots' own, moved on by
// the input's offset when it is a range view (an address-less sim slot stays null).
std::vector<char*> InputAddresses(const proto::ActorDef& def, int index,
                                  const std::vector<char*>& slots) {
  const int64_t offset = plan::InputOffset(def, index);
  std::vector<char*> addresses = slots;
  if (offset == 0) return addresses;
  for (char*& address : addresses) {
    if (address != nullptr) address += offset;
  }
  return addresses;
}

// An actor that computes (its device holds memory) must not touch a register of a device whose
// arena holds no memory (a sim device: its slots have no address).
Status CheckRegistersHoldMemory(const proto::Plan& plan, const proto::ActorDef& def,
                                const std::vector<Device*>& devices,
                                const std::vector<std::unique_ptr<DeviceArena>>& arenas,
                                const RegisterSlots& slots) {
  if (!arenas[def.device()]->holds_memory()) return Status::Ok();
  auto check = [&](int64_t register_id) {
    const proto::RegisterDef& r = plan.register_def(static_cast<int>(register_id));
    const std::vector<char*>& addresses = slots[static_cast<size_t>(register_id)];
    if (addresses.empty()) {
      return InvalidArgumentError(plan::ActorLabel(def.name()) + " uses " +
                                  RegisterName(plan, register_id) +
                                  ", which lies on a node that is not hosted here");
    }
    if (addresses[0] != nullptr) return Status::Ok();
    return InvalidArgumentError(plan::ActorLabel(def.name()) + " on device '" +
                                devices[def.device()]->name() + "' uses " +
                                RegisterName(plan, register_id) + " of device '" +
                                plan::DeviceName(plan.device(r.device())) +
                                "', which holds no memory (sim devices compute nothing)");
  };
  for (int64_t r : def.input_register()) SOFTWIRE_RETURN_IF_ERROR(check(r));
  if (def.kind() == proto::ACTOR_KIND_SEND) return Status::Ok();  // Its output is the peer's.
  for (int64_t r : def.output_register()) SOFTWIRE_RETURN_IF_ERROR(check(r));
  return Status::Ok();
}

// A send on a device with memory: its wire register's slots may lie in another process (no
// addresses here); the kernel addresses them by slot number through the transport.
bool IsWireSend(const proto::ActorDef& def, const DeviceArena& arena) {
  return def.kind() == proto::ACTOR_KIND_SEND && arena.holds_memory() &&
         def.output_register_size() == 1;
}

StatusOr<std::unique_ptr<Kernel>> CreateSendKernel(const proto::Plan& plan,
                                                   const proto::ActorDef& def,
                                                   const LaunchWiring& wiring) {
  if (wiring.wire_transport == nullptr) {
    return InternalError(plan::ActorLabel(def.name()) + ": bound without a wire transport");
  }
  const proto::RegisterDef& wire = plan.register_def(static_cast<int>(def.output_register(0)));
  SOFTWIRE_ASSIGN_OR_RETURN(TensorView view, ViewOf(wire.tensor(), RegisterName(plan, wire.id())));
  return std::unique_ptr<Kernel>(new SendKernel(wiring.job, plan.device(wire.device()).node(),
                                                wire.id(), view.NumBytes(), wiring.wire_transport,
                                                wiring.stopping));
}

StatusOr<std::unique_ptr<ActorBinding>> BindActor(
    const proto::Plan& plan, const proto::ActorDef& def,
    const actors::ActorDescription& description, const RegisterSlots& slots,
    const std::vector<Device*>& devices, const std::vector<std::unique_ptr<DeviceArena>>& arenas,
    const LaunchWiring& wiring, OutputReporter* reporter, const data::DataRoot& data_root) {
  std::string what = plan::ActorLabel(def.name());
  if (def.device() < 0 || def.device() >= static_cast<int>(devices.size()) ||
      devices[def.device()] == nullptr) {
    return InvalidArgumentError(what + ": device " + std::to_string(def.device()) +
                                " does not exist here");
  }
  const Device& device = *devices[def.device()];
  const DeviceArena& arena = *arenas[def.device()];
  KernelContext context = device.NewKernelContext(def.queue());
  std::vector<std::vector<char*>> input_slots;
  std::vector<std::vector<char*>> output_slots;
  SOFTWIRE_RETURN_IF_ERROR(CheckRegistersHoldMemory(plan, def, devices, arenas, slots));
  // The kernel sees its first KernelInputCount inputs; the protocol binds every input's slots,
  // ordering inputs too (plan/ordering_inputs.h), and the kernel never reads those.
  const int kernel_inputs = plan::KernelInputCount(def);
  for (int i = 0; i < def.input_register_size(); ++i) {
    if (i < kernel_inputs) {
      SOFTWIRE_ASSIGN_OR_RETURN(TensorView view, KernelView(plan, def, /*input=*/true, i));
      context.inputs.push_back(std::move(view));
      input_slots.push_back(InputAddresses(def, i, slots[def.input_register(i)]));
    } else {
      input_slots.push_back(slots[def.input_register(i)]);
    }
  }
  for (int i = 0; i < def.output_register_size(); ++i) {
    SOFTWIRE_ASSIGN_OR_RETURN(TensorView view, KernelView(plan, def, /*input=*/false, i));
    context.outputs.push_back(std::move(view));
    output_slots.push_back(slots[def.output_register(i)]);
    if (output_slots.back().empty()) {  // A send's wire register on another process.
      const int count = plan.register_def(static_cast<int>(def.output_register(i))).slots();
      output_slots.back().assign(static_cast<size_t>(std::max(count, 1)), nullptr);
    }
  }
  context.output_slots.assign(def.output_register_size(), 0);
  context.output_fill_begins.assign(def.output_register_size(), true);
  if (def.workspace_bytes() > 0) {
    SOFTWIRE_ASSIGN_OR_RETURN(
        context.workspace,
        arena.Region(def.workspace_offset(), def.workspace_bytes(), what + " workspace"));
  }
  if (def.state_bytes() > 0) {
    SOFTWIRE_ASSIGN_OR_RETURN(context.state,
                              arena.Region(def.state_offset(), def.state_bytes(), what + " state"));
  }
  KernelSetup setup;
  setup.plan = &plan;
  setup.actor = &def;
  setup.reporter = reporter;
  setup.data_root = data_root;
  StatusOr<std::unique_ptr<Kernel>> kernel = IsWireSend(def, arena)
                                                 ? CreateSendKernel(plan, def, wiring)
                                                 : device.CreateKernel(setup);  // Names the actor.
  if (!kernel.ok()) return kernel.status();
  StatusOr<DeviceQueue*> queue = device.queue(def.queue());
  if (!queue.ok()) return queue.status().WithContext(what);
  return std::make_unique<ActorBinding>(&def, &description, std::move(kernel).value(), *queue,
                                        std::move(context), std::move(input_slots),
                                        std::move(output_slots), wiring);
}

}  // namespace

ActorBinding::ActorBinding(const proto::ActorDef* def, const actors::ActorDescription* description,
                           std::unique_ptr<Kernel> kernel, DeviceQueue* queue,
                           KernelContext context, std::vector<std::vector<char*>> input_slots,
                           std::vector<std::vector<char*>> output_slots, const LaunchWiring& wiring)
    : def_(def),
      description_(description),
      kernel_(std::move(kernel)),
      queue_(queue),
      contexts_(static_cast<size_t>(description->max_in_flight), context),
      input_slots_(std::move(input_slots)),
      output_slots_(std::move(output_slots)),
      display_name_(plan::ActorLabel(def->name())) {
  requests_.resize(contexts_.size());
  for (size_t i = 0; i < requests_.size(); ++i) {
    LaunchRequest& request = requests_[i];
    request.actor = def->id();
    request.kernel = kernel_.get();
    request.context = &contexts_[i];
    request.estimated_seconds = def->estimated_seconds();
    request.listener = wiring.listener;
    request.stopping = wiring.stopping;
  }
}

void ActorBinding::StartRun(int64_t pieces_before) {
  firing_base_ = pieces_before / std::max<int64_t>(1, def_->period());
  piece_base_ = pieces_before;
  completed_firings.store(0);
  deferred_launches.store(0);
  firings_in_flight.store(0);
  finished.store(false);
}

const LaunchRequest& ActorBinding::Bind(const actors::Firing& firing, FiringTimes* times) {
  // Per firing: only data pointers and numbers change. The checks guard the arena against a
  // protocol bug (a slot out of range); each is one comparison.
  // Firings in flight are consecutive and fewer than the ring: firing i's context is free
  // again once firing i - max_in_flight completed, before firing i could launch.
  const size_t ring = static_cast<size_t>(firing.index) % contexts_.size();
  KernelContext& context = contexts_[ring];
  LaunchRequest& request = requests_[ring];
  const size_t inputs = input_slots_.size();
  const size_t outputs = output_slots_.size();
  CHECK(firing.inputs.size() == inputs && firing.outputs.size() == outputs)
      << display_name_ << ": firing binds the wrong number of registers";
  for (size_t i = 0; i < context.inputs.size(); ++i) {  // The kernel's inputs come first.
    const size_t slot = static_cast<size_t>(firing.inputs[i].slot);
    CHECK(slot < input_slots_[i].size()) << display_name_ << ": input slot " << slot;
    context.inputs[i].data = input_slots_[i][slot];
  }
  for (size_t i = 0; i < outputs; ++i) {
    const size_t slot = static_cast<size_t>(firing.outputs[i].slot);
    CHECK(slot < output_slots_[i].size()) << display_name_ << ": output slot " << slot;
    context.outputs[i].data = output_slots_[i][slot];
    context.output_slots[i] = static_cast<int32_t>(slot);
  }
  if (firing.output_fill_begins.size() == outputs) {
    for (size_t i = 0; i < outputs; ++i) {
      context.output_fill_begins[i] = firing.output_fill_begins[i];
    }
  }
  context.firing = firing_base_ + firing.index;
  context.first_piece = piece_base_ + firing.first_piece;
  request.firing = firing.index;
  request.times = times;
  return request;
}

StatusOr<std::vector<std::unique_ptr<ActorBinding>>> BindActors(
    const proto::Plan& plan, const std::vector<actors::ActorDescription>& descriptions,
    const std::vector<Device*>& devices, const std::vector<std::unique_ptr<DeviceArena>>& arenas,
    const RegisterSlots& slots, const std::vector<int64_t>& actors, const LaunchWiring& wiring,
    OutputReporter* reporter, const data::DataRoot& data_root) {
  std::vector<std::unique_ptr<ActorBinding>> bindings(static_cast<size_t>(plan.actor_size()));
  for (int64_t id : actors) {
    const proto::ActorDef& def = plan.actor(static_cast<int>(id));
    SOFTWIRE_ASSIGN_OR_RETURN(bindings[static_cast<size_t>(id)],
                              BindActor(plan, def, descriptions[def.id()], slots, devices, arenas,
                                        wiring, reporter, data_root));
  }
  return bindings;
}

}  // namespace runtime
}  // namespace softwire
