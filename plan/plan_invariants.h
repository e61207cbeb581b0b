// The plan invariants of docs/PROTOCOL.md ("Plan invariants"), one check per invariant, written
// once for every layer: the compiler runs them on every plan it emits, and the engines
// (actors/'s DescribeActors, hence the runtime and the simulator) on every plan they load,
// since they must not trust their input. The reference interpreter keeps checks of its own on
// purpose, as an independent oracle (reference/README.md).
//
// Every failure is InvalidArgument naming what is at fault with plan/labels.h, e.g.
// "actor 'relu' (2): reads register 'x' (0) with period 3, which its period 2 does not divide".
// Run the checks in order: each may rely on the ones before it (ids in range first).
// Pure functions; thread-safe. Cost: linear in the plan's actors, registers and reads.
#ifndef SOFTWIRE_PLAN_PLAN_INVARIANTS_H_
#define SOFTWIRE_PLAN_PLAN_INVARIANTS_H_

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace plan {

// All the checks below, in order, with CheckOrderingInputs (plan/ordering_inputs.h) and
// CheckInputRanges (plan/input_ranges.h) after the phases.
Status CheckPlanInvariants(const proto::Plan& plan);

// 1. The schedule is positive and within plan/steps.h's limits; device, register and actor ids
//    equal their index; every id the plan mentions exists; devices (node and name) and actor
//    names are unique, and actor names non-empty.
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
//    workspaces and actor state do not overlap and end within planned_bytes, except the slots
//    of two registers that list each other in shares_bytes_with; every such pair is on one
//    device and never live together under any firing order (plan/register_lifetimes.h).
Status CheckArenaLayout(const proto::Plan& plan);

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_PLAN_INVARIANTS_H_
