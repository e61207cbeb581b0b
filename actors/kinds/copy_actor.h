// Copy actor: moves a register's value to another device (or another queue of one device),
// byte for byte, so copies overlap compute.
#ifndef SOFTWIRE_ACTORS_KINDS_COPY_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_COPY_ACTOR_H_

#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: one input and one output holding the same tensor; both with the actor's period.
Status CheckCopyActor(const ActorKindCheck& check);

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_COPY_ACTOR_H_
