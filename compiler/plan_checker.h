// Checks a plan against the invariants of docs/PROTOCOL.md ("Plan invariants") and the rules
// of each actor kind. The compiler runs it on every plan it emits; tests run it on plans they
// build by hand. Engines check the same rules again when they load a plan (actors/), since
// they must not trust their input.
#ifndef SOFTWIRE_COMPILER_PLAN_CHECKER_H_
#define SOFTWIRE_COMPILER_PLAN_CHECKER_H_

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace compiler {

// OK, or FailedPrecondition naming the first actor, register or device that breaks a rule:
// ids equal indices; one producer per register and consumer lists equal to the readers;
// periods divide total pieces and each other, firings = total / period; at most one phase-1
// consumer and only on one slot; slots >= 1, bytes_per_slot >= tensor bytes; regions of one
// device (register slots, workspaces, state) do not overlap and fit planned_bytes; source,
// variable, update and sink actors carry their settings; outputs name sink actors.
Status CheckPlanInvariants(const proto::Plan& plan);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_PLAN_CHECKER_H_
