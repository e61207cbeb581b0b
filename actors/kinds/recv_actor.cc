#include "actors/kinds/recv_actor.h"

#include "plan/labels.h"

namespace softwire {
namespace actors {

Status CheckRecvActor(const ActorKindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(0, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  for (const InputDescription& input : check.actor.inputs) {
    if (check.actors[input.producer].kind != ActorKind::kSend) {
      return check.Error("reads " + plan::RegisterLabel(check.input_register(0)) +
                         " only from a send actor, but " + check.actors[input.producer].name +
                         " writes it");
    }
  }
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
