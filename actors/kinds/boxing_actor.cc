#include "actors/kinds/boxing_actor.h"

namespace softwire {
namespace actors {

Status CheckBoxingActor(const ActorKindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(0, -1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, -1));
  return check.ExpectRegistersHaveActorPeriod();
}

}  // namespace actors
}  // namespace softwire
