// Checks every plan the compiler emits (Compilation::Verify), and plans tests build by hand,
// with the very checks the engines run when they load a plan (actors' DescribeActors): the plan
// invariants of docs/PROTOCOL.md (plan/plan_invariants.h), then the rules of each actor kind
// (plan/actor_kind_rules.h).
#ifndef SOFTWIRE_COMPILER_EMITTED_PLAN_CHECK_H_
#define SOFTWIRE_COMPILER_EMITTED_PLAN_CHECK_H_

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace compiler {

// OK, or InvalidArgument naming the first actor, register or device that breaks a plan
// invariant (plan::CheckPlanInvariants), the first actor that breaks its kind's rules, or the
// first output or variable not reported or written by an actor of the right kind
// (plan::CheckActorKindRules). A plan this accepts, the engines accept.
Status CheckEmittedPlan(const proto::Plan& plan);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_EMITTED_PLAN_CHECK_H_
