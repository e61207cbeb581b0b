// Sink actor: reads a float32 scalar per piece and reports (output name, piece, value) to the
// host, which averages the values of each step (PlanOutput).
#ifndef SOFTWIRE_ACTORS_KINDS_SINK_ACTOR_H_
#define SOFTWIRE_ACTORS_KINDS_SINK_ACTOR_H_

#include <cstdint>

#include "actors/actor_protocol.h"
#include "actors/kinds/actor_kind_check.h"
#include "base/status.h"

namespace softwire {
namespace actors {

// Plan rules: one float32 scalar input; no outputs; period 1; sink settings naming the output.
Status CheckSinkActor(const ActorKindCheck& check);

// The piece whose value `firing` reports.
inline int64_t SinkPiece(const Firing& firing) {
  return firing.first_piece;
}

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_SINK_ACTOR_H_
