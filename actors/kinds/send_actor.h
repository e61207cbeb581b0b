// Send actor: moves a value to another node over the data plane. Its optional output register
// stands for the bytes in flight and is read by the matching recv actor.
#ifndef SOFTWIRE_ACTORS_KINDS_SEND_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_SEND_ACTOR_H_

#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: one input; at most one output, read only by recv actors; every register with the
// actor's period ("as the value").
Status CheckSendActor(const ActorKindCheck& check);

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_SEND_ACTOR_H_
