// The plan invariants of docs/PROTOCOL.md ("Plan invariants"), one check per invariant.
// DescribeActors runs them in order before it builds any description, so later code may rely
// on every id being in range. Internal to actors/.
#ifndef SOFTWIRE_ACTORS_PLAN_INVARIANTS_H_
#define SOFTWIRE_ACTORS_PLAN_INVARIANTS_H_

#include <cstdint>
#include <string>

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace actors {

// "actor 'relu' (2)" and "register 'x' (0)": how every error names what is at fault.
std::string ActorLabel(const proto::ActorDef& actor);
std::string RegisterLabel(const proto::RegisterDef& register_def);

// steps * pieces_per_step.
int64_t TotalPieces(const proto::Plan& plan);

// 1. The schedule is positive; device, register and actor ids equal their index; every id the
//    plan mentions exists; actor names are non-empty and unique.
Status CheckIds(const proto::Plan& plan);

// 2. Each register has exactly one producer, named by `producer`, and its consumer list (no
//    duplicates) equals the set of actors reading it. No actor reads what it writes.
Status CheckProducersAndConsumers(const proto::Plan& plan);

// 3. Periods are >= 1 and divide total_pieces; an actor's period divides the period of every
//    register it reads or writes; firings == total_pieces / period.
Status CheckPeriods(const proto::Plan& plan);

// 4. Phases are 0 or 1; at most one phase-1 consumer per register, only on one slot.
Status CheckPhases(const proto::Plan& plan);

// 5. slots >= 1; bytes_per_slot >= tensor bytes; on each device the slots of registers,
//    workspaces and actor state do not overlap and end within planned_bytes.
Status CheckArenaLayout(const proto::Plan& plan);

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_PLAN_INVARIANTS_H_
