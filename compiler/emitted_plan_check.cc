#include "compiler/emitted_plan_check.h"

#include <string>

#include "plan/labels.h"
#include "plan/plan_invariants.h"

namespace softwire {
namespace compiler {
namespace {

Status Fail(const proto::ActorDef& actor, const std::string& what) {
  return InvalidArgumentError(plan::ActorLabel(actor) + ": " + what);
}

Status CheckKindSettings(const proto::Plan& plan) {
  for (const proto::ActorDef& actor : plan.actor()) {
    switch (actor.kind()) {
      case proto::ACTOR_KIND_SOURCE:
        if (!actor.has_source()) return Fail(actor, "is a source without settings");
        break;
      case proto::ACTOR_KIND_VARIABLE:
        if (!actor.has_variable() || actor.output_register_size() != 1 ||
            plan.register_def(actor.output_register(0)).slots() != 1) {
          return Fail(actor, "is a variable and must have settings and one 1-slot output");
        }
        break;
      case proto::ACTOR_KIND_UPDATE:
        if (!actor.has_update() || actor.input_register_size() != 2) {
          return Fail(actor, "is an update and must have settings and two inputs");
        }
        break;
      case proto::ACTOR_KIND_SINK:
        if (!actor.has_sink()) return Fail(actor, "is a sink without settings");
        break;
      case proto::ACTOR_KIND_UNSPECIFIED:
        return Fail(actor, "has no kind");
      default:
        break;
    }
  }
  for (const proto::PlanOutput& output : plan.output()) {
    if (plan.actor(static_cast<int>(output.sink_actor())).kind() != proto::ACTOR_KIND_SINK) {
      return InvalidArgumentError("output '" + output.name() + "' does not name a sink actor");
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckEmittedPlan(const proto::Plan& plan) {
  SOFTWIRE_RETURN_IF_ERROR(plan::CheckPlanInvariants(plan));
  return CheckKindSettings(plan);
}

}  // namespace compiler
}  // namespace softwire
