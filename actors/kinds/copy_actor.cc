#include "actors/kinds/copy_actor.h"

#include <algorithm>

#include "actors/plan_invariants.h"

namespace softwire {
namespace actors {

Status CheckCopyActor(const ActorKindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  const proto::TensorDesc& from = check.input_register(0).tensor();
  const proto::TensorDesc& to = check.output_register(0).tensor();
  if (from.dtype() != to.dtype() ||
      !std::equal(from.dims().begin(), from.dims().end(), to.dims().begin(), to.dims().end())) {
    return check.Error("copies bytes, so " + RegisterLabel(check.input_register(0)) + " and " +
                       RegisterLabel(check.output_register(0)) + " must hold the same tensor");
  }
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
