#include "actors/kinds/variable_actor.h"

#include "plan/labels.h"

namespace softwire {
namespace actors {

Status CheckVariableActor(const ActorKindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(0, 0));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectPeriod(check.pieces_per_step(), "one step per firing"));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  const proto::RegisterDef& value = check.output_register(0);
  if (value.slots() != 1) {
    return check.Error("holds one value updated in place, so " + plan::RegisterLabel(value) +
                       " must have 1 slot, has " + std::to_string(value.slots()));
  }
  if (check.def.variable().variable().empty()) return check.Error("names no variable");
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
