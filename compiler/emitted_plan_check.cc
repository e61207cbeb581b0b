#include "compiler/emitted_plan_check.h"

#include "plan/actor_kind_rules.h"
#include "plan/plan_invariants.h"

namespace softwire {
namespace compiler {

Status CheckEmittedPlan(const proto::Plan& plan) {
  SOFTWIRE_RETURN_IF_ERROR(plan::CheckPlanInvariants(plan));
  return plan::CheckActorKindRules(plan);
}

}  // namespace compiler
}  // namespace softwire
