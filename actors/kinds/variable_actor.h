// Variable actor: owns a variable's register (one slot, per-step period). Firing 0 writes the
// initial value (data/initializer.h); later firings write nothing, because the update actor,
// the register's phase-1 consumer, changed the value in place (docs/DECISIONS.md #1). Each
// firing still offers the step's fill to the readers.
#ifndef SOFTWIRE_ACTORS_KINDS_VARIABLE_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_VARIABLE_ACTOR_H_

#include <cstdint>

#include "actors/actor_protocol.h"
#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: no inputs; one output with one slot and a per-step period; period
// pieces_per_step; variable settings naming the variable.
Status CheckVariableActor(const ActorKindCheck& check);

// True when the kernel must write the initial value: only on the first firing.
inline bool VariableWritesInitialValue(const Firing& firing) {
  return firing.index == 0;
}

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_VARIABLE_ACTOR_H_
