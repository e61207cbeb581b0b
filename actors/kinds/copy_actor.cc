#include "actors/kinds/copy_actor.h"

#include <algorithm>

#include "plan/labels.h"

namespace softwire {
namespace actors {
namespace {

// A slice-copy's output is a block of its input: same dtype and rank, no larger extent.
Status CheckSliceCopy(const ActorKindCheck& check, const proto::TensorDesc& from,
                      const proto::TensorDesc& to) {
  bool block = from.dtype() == to.dtype() && from.dims_size() == to.dims_size();
  for (int axis = 0; block && axis < from.dims_size(); ++axis) {
    block = to.dims(axis) <= from.dims(axis);
  }
  if (block) return Status::Ok();
  return check.Error("slices, so " + plan::RegisterLabel(check.output_register(0)) +
                     " must hold a block of " + plan::RegisterLabel(check.input_register(0)) +
                     " (same dtype and rank, no larger extent)");
}

}  // namespace

Status CheckCopyActor(const ActorKindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  const proto::TensorDesc& from = check.input_register(0).tensor();
  const proto::TensorDesc& to = check.output_register(0).tensor();
  if (check.def.kernel().op_type() == "slice") return CheckSliceCopy(check, from, to);
  if (from.dtype() != to.dtype() ||
      !std::equal(from.dims().begin(), from.dims().end(), to.dims().begin(), to.dims().end())) {
    return check.Error("copies bytes, so " + plan::RegisterLabel(check.input_register(0)) +
                       " and " + plan::RegisterLabel(check.output_register(0)) +
                       " must hold the same tensor");
  }
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
