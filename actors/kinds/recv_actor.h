// Recv actor: receives a value from another node over the data plane into its output register.
// Its optional input is the output register of the matching send actor.
#ifndef SOFTWIRE_ACTORS_KINDS_RECV_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_RECV_ACTOR_H_

#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: one output; at most one input, written by a send actor; every register with the
// actor's period ("as the value").
Status CheckRecvActor(const ActorKindCheck& check);

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_RECV_ACTOR_H_
