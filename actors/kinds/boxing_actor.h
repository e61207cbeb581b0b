// Boxing actor: one step of a transfer the compiler inserted where producer and consumer
// disagree on placement or sbp: split, concat, add, or one step of a ring collective.
#ifndef SOFTWIRE_ACTORS_KINDS_BOXING_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_BOXING_ACTOR_H_

#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: at least one output; every register with the actor's period ("as the value").
// Inputs: usually one or more; none for the `fill` that makes a zero part where a partial-sum
// destination has no source block (it then fires once per period, paced by its output slots).
Status CheckBoxingActor(const ActorKindCheck& check);

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_BOXING_ACTOR_H_
