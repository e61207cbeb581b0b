// ActorDescription: what never changes about an actor during a run, built once from the plan.
//
// Kept apart from the live state (ActorProtocol) as TensorFlow keeps its immutable executor
// state apart from its propagator. Descriptions are plain data: no CAF, no threads, no
// protobuf beyond DescribeActors' input.
#ifndef SOFTWIRE_ACTORS_ACTOR_DESCRIPTION_H_
#define SOFTWIRE_ACTORS_ACTOR_DESCRIPTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace softwire {
namespace proto {
class Plan;
}  // namespace proto

namespace actors {

using ActorId = int64_t;
using RegisterId = int64_t;

// Mirrors proto::ActorKind, in its order, without its UNSPECIFIED value (which DescribeActors
// rejects).
enum class ActorKind {
  kSource,
  kCompute,
  kVariable,
  kAccumulate,
  kUpdate,
  kSink,
  kCopy,
  kSend,
  kRecv,
  kBoxing,
};

// "source", "compute", ... (plan::ActorKindName).
const char* ActorKindName(ActorKind kind);

// One reader of a register (see docs/PROTOCOL.md, "Slots come back").
struct ConsumerDescription {
  ActorId actor = -1;
  int phase = 0;  // 0: reader; 1: in-place writer, gets Ready after every reader released.
  // A phase-0 reader whose kernels run on the producer's in-order device queue: its Ready is
  // sent when the producer's firing that completes the fill launches, not when it completes
  // (docs/PROTOCOL.md, "Stream-ordered edges"). Set only by MarkStreamOrderedEdges.
  bool ready_at_launch = false;
};

// A register as its producer sees it.
struct OutputDescription {
  RegisterId register_id = -1;
  std::string register_name;
  int slots = 1;
  int64_t period = 1;
  std::vector<ConsumerDescription> consumers;  // Plan order.
};

// A register as a consumer sees it.
struct InputDescription {
  RegisterId register_id = -1;
  std::string register_name;
  ActorId producer = -1;
  int64_t period = 1;
  int phase = 0;
  int slots = 1;  // The register's slot count: at most this many fills are in flight.
  // Every next writer of the register's slots (its producer and its phase-1 consumer, if any;
  // for a phase-1 input: its producer) runs on this actor's in-order device queue: the actor
  // releases a fill when the last firing that reads it launches, not when it completes
  // (docs/PROTOCOL.md, "Stream-ordered edges"). Set only by MarkStreamOrderedEdges.
  bool release_at_launch = false;
};

struct ActorDescription {
  ActorId id = -1;
  std::string name;
  ActorKind kind = ActorKind::kCompute;
  int32_t device = 0;  // Index in Plan.device.
  int64_t period = 1;
  int64_t firings = 0;                     // total_pieces / period.
  int max_in_flight = 1;                   // Firings launched and not completed at once (>= 1).
  std::vector<InputDescription> inputs;    // Kernel input order.
  std::vector<OutputDescription> outputs;  // Kernel output order.
};

// Builds every actor's description from `plan` after checking the plan invariants of
// docs/PROTOCOL.md (ids, producer/consumer symmetry, periods, phases, slots and arena layout:
// plan/plan_invariants.h) and the rules of each actor kind (plan/actor_kind_rules.h). The error
// (InvalidArgument) names the actor or register at fault, e.g. "actor 'relu' (2): reads register
// 'x' (0) with period 3, which its period 2 does not divide". Result index == actor id.
//
// An actor may list one register several times among its inputs (mul(x, x)): it is one
// consumer of that register, receives one Ready per fill and sends one Release.
StatusOr<std::vector<ActorDescription>> DescribeActors(const proto::Plan& plan);

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_ACTOR_DESCRIPTION_H_
