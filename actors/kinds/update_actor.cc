#include "actors/kinds/update_actor.h"

#include "plan/labels.h"

namespace softwire {
namespace actors {

Status CheckUpdateActor(const ActorKindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(2, 2));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(0, 0));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectPeriod(check.pieces_per_step(), "one step per firing"));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  const InputDescription& gradient = check.actor.inputs[0];
  const InputDescription& variable = check.actor.inputs[1];
  if (gradient.register_id == variable.register_id) {
    return check.Error("reads the same register as gradient and variable");
  }
  if (gradient.phase != 0) {
    return check.Error("must read its gradient " + plan::RegisterLabel(check.input_register(0)) +
                       " in phase 0");
  }
  if (variable.phase != 1) {
    return check.Error("writes its variable in place, so it must be the phase-1 consumer of " +
                       plan::RegisterLabel(check.input_register(1)));
  }
  if (check.actors[variable.producer].kind != ActorKind::kVariable) {
    return check.Error("updates " + plan::RegisterLabel(check.input_register(1)) +
                       ", which is written by " + check.actors[variable.producer].name +
                       ", not by a variable actor");
  }
  if (check.def.update().optimizer().kind_case() == proto::Optimizer::KIND_NOT_SET) {
    return check.Error("has no optimizer");
  }
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
