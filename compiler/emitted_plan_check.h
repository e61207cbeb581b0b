// Checks every plan the compiler emits (Compilation::Verify), and plans tests build by hand:
// the plan invariants of docs/PROTOCOL.md (plan/plan_invariants.h, the same checks the engines
// run when they load a plan), then that each actor carries the settings of its kind.
#ifndef SOFTWIRE_COMPILER_EMITTED_PLAN_CHECK_H_
#define SOFTWIRE_COMPILER_EMITTED_PLAN_CHECK_H_

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace compiler {

// OK, or InvalidArgument naming the first actor, register or device that breaks a plan
// invariant (plan::CheckPlanInvariants); or naming an actor without a kind or without its
// kind's settings (source, variable with one 1-slot output, update with two inputs, sink), or
// an output that does not name a sink actor. The engines check the kinds' rules in full
// (actors/kinds/); this is the part the compiler can check without an actor description.
Status CheckEmittedPlan(const proto::Plan& plan);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_EMITTED_PLAN_CHECK_H_
