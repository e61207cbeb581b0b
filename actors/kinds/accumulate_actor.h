// Accumulate actor: a per-piece actor writing a per-step register. The firing that begins a fill
// overwrites the slot (sum = x); the others add to it (sum += x). The fill is complete, and
// its Ready sent, after the step's last piece (docs/PROTOCOL.md, "Outputs").
#ifndef SOFTWIRE_ACTORS_KINDS_ACCUMULATE_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_ACCUMULATE_ACTOR_H_

#include <cstdint>

#include "actors/actor_protocol.h"
#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: one per-piece input; one output of period pieces_per_step; period 1.
Status CheckAccumulateActor(const ActorKindCheck& check);

// True when `firing` begins its output fill, so the kernel overwrites instead of adding.
inline bool AccumulateOverwrites(const Firing& firing) {
  return firing.output_fill_begins[0];
}

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_ACCUMULATE_ACTOR_H_
