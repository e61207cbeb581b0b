// Copy actor: moves a register's value to another device (or another queue of one device), so
// copies overlap compute. It runs `copy` (byte for byte) or, where only a block of the value is
// wanted on the other side, `slice` (a slice-copy: docs/PARALLELISM.md, "Boxing").
#ifndef SOFTWIRE_ACTORS_KINDS_COPY_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_COPY_ACTOR_H_

#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: one input and one output, both with the actor's period, of one dtype. A `slice`
// writes a block of what it reads (the same rank, no extent larger than the input's); any other
// kernel (`copy`) writes the same tensor it reads.
Status CheckCopyActor(const ActorKindCheck& check);

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_COPY_ACTOR_H_
