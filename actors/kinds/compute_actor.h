// Compute actor: each firing runs one op's kernel (docs/OPS.md) on its inputs' slots, writing
// its outputs' slots. Per-piece (period 1), or per-step for ops such as fill.
#ifndef SOFTWIRE_ACTORS_KINDS_COMPUTE_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_COMPUTE_ACTOR_H_

#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: an op type; at least one output; period 1 or pieces_per_step; outputs have the
// actor's period (a compute kernel overwrites, it never accumulates: that is the accumulate
// kind). Inputs may have longer periods: a per-piece matmul reads a per-step weight.
Status CheckComputeActor(const ActorKindCheck& check);

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_COMPUTE_ACTOR_H_
