#include "actors/kinds/send_actor.h"

#include "plan/labels.h"

namespace softwire {
namespace actors {

Status CheckSendActor(const ActorKindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(0, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  for (const OutputDescription& output : check.actor.outputs) {
    for (const ConsumerDescription& consumer : output.consumers) {
      if (check.actors[consumer.actor].kind != ActorKind::kRecv) {
        return check.Error("hands " + plan::RegisterLabel(check.output_register(0)) +
                           " only to recv actors, but " + check.actors[consumer.actor].name +
                           " reads it");
      }
    }
  }
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
