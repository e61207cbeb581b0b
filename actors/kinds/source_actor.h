// Source actor: each firing fills one piece's micro-batch into its output registers: samples
// [sample_begin, sample_end) of every dataset output (docs/OPS.md, "source"; data/dataset.h).
#ifndef SOFTWIRE_ACTORS_KINDS_SOURCE_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_SOURCE_ACTOR_H_

#include <cstdint>

#include "actors/actor_protocol.h"
#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: no inputs; one per-piece output per dataset output; period 1; a dataset and a
// non-empty sample slice.
Status CheckSourceActor(const ActorKindCheck& check);

// The piece whose micro-batch `firing` fills.
inline int64_t SourcePiece(const Firing& firing) {
  return firing.first_piece;
}

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_SOURCE_ACTOR_H_
