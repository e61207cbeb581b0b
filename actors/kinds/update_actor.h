// Update actor: applies the optimizer to a variable in place once per step. Input 0 is the
// accumulated gradient (phase 0); input 1 is the variable's register, of which the update actor
// is the phase-1 consumer: it gets Ready only after every reader of the step released it.
#ifndef SOFTWIRE_ACTORS_KINDS_UPDATE_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_UPDATE_ACTOR_H_

#include <cstdint>

#include "actors/actor_protocol.h"
#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: inputs (gradient, variable) with phases (0, 1), the variable written by a
// variable actor; no outputs; period pieces_per_step; update settings with an optimizer.
Status CheckUpdateActor(const ActorKindCheck& check);

// The optimizer step t of `firing` (1-based: the first update is step 1).
inline int64_t UpdateStep(const Firing& firing) {
  return firing.index + 1;
}

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_UPDATE_ACTOR_H_
