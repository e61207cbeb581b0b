#include "plan/input_ranges.h"

#include <string>

#include "plan/labels.h"
#include "plan/ordering_inputs.h"
#include "proto/tensor_desc.h"

namespace softwire {
namespace plan {
namespace {

// Bytes of `desc`, or -1 when its dtype has no size (CheckIds' neighbours report that).
int64_t BytesOf(const proto::TensorDesc& desc) {
  const DType dtype = DTypeOf(desc);
  if (dtype == DType::kInvalid) return -1;
  return ShapeOf(desc).NumElements() * SizeOf(dtype);
}

Status CheckActorRanges(const proto::Plan& plan, const proto::ActorDef& actor) {
  const proto::KernelDef& kernel = actor.kernel();
  if (kernel.input_offset_size() == 0) return Status::Ok();
  const int described = KernelInputCount(actor);
  if (kernel.input_offset_size() != described || kernel.input_size() != described) {
    return InvalidArgumentError(ActorLabel(actor) + ": its kernel gives " +
                                std::to_string(kernel.input_offset_size()) + " input offsets for " +
                                std::to_string(kernel.input_size()) +
                                " described inputs; give one per described input or none");
  }
  for (int k = 0; k < described; ++k) {
    const proto::RegisterDef& reg = plan.register_def(static_cast<int>(actor.input_register(k)));
    const proto::TensorDesc& read = kernel.input(k);
    const int64_t offset = kernel.input_offset(k);
    const int64_t bytes = BytesOf(read);
    const int64_t held = BytesOf(reg.tensor());
    const std::string who = ActorLabel(actor) + ": input " + std::to_string(k);
    if (bytes < 0 || held < 0) continue;
    if (read.dtype() != reg.tensor().dtype()) {
      return InvalidArgumentError(who + " reads " + RegisterLabel(reg) +
                                  " as another dtype; a range keeps the register's");
    }
    if (offset < 0 || offset > held - bytes) {
      return InvalidArgumentError(who + " reads " + std::to_string(bytes) + " bytes from byte " +
                                  std::to_string(offset) + " of " + RegisterLabel(reg) +
                                  ", which holds " + std::to_string(held) +
                                  ": the range leaves the slot");
    }
    if (offset % SizeOf(DTypeOf(read)) != 0) {
      return InvalidArgumentError(who + " starts at byte " + std::to_string(offset) + " of " +
                                  RegisterLabel(reg) + ", within an element");
    }
  }
  return Status::Ok();
}

}  // namespace

int64_t InputOffset(const proto::ActorDef& actor, int index) {
  const proto::KernelDef& kernel = actor.kernel();
  return index < kernel.input_offset_size() ? kernel.input_offset(index) : 0;
}

bool IsRangeInput(const proto::Plan& plan, const proto::ActorDef& actor, int index) {
  if (InputOffset(actor, index) != 0) return true;
  if (index >= actor.kernel().input_size()) return false;
  const proto::RegisterDef& reg = plan.register_def(static_cast<int>(actor.input_register(index)));
  return BytesOf(actor.kernel().input(index)) < BytesOf(reg.tensor());
}

Status CheckInputRanges(const proto::Plan& plan) {
  for (const proto::ActorDef& actor : plan.actor()) {
    SOFTWIRE_RETURN_IF_ERROR(CheckActorRanges(plan, actor));
  }
  return Status::Ok();
}

}  // namespace plan
}  // namespace softwire
