#include "plan/steps.h"

#include <algorithm>
#include <string>

#include "plan/labels.h"

namespace softwire {
namespace plan {
namespace {

Status CheckDivides(const std::string& label, int64_t period, int64_t pieces, int64_t steps) {
  if (period >= 1 && pieces % period == 0) return Status::Ok();
  return InvalidArgumentError(label + ": period " + std::to_string(period) +
                              " does not divide the " + std::to_string(pieces) + " pieces of " +
                              std::to_string(steps) + " steps");
}

}  // namespace

int64_t TotalPieces(const proto::Plan& plan) {
  return plan.schedule().steps() * plan.schedule().pieces_per_step();
}

StatusOr<proto::Plan> WithSteps(const proto::Plan& plan, int64_t steps) {
  if (steps < 1 || steps > kMaxSteps) {
    return InvalidArgumentError("cannot run " + std::to_string(steps) + " steps; 1 to " +
                                std::to_string(kMaxSteps));
  }
  const int64_t pieces_per_step = plan.schedule().pieces_per_step();
  if (pieces_per_step > kMaxPiecesPerStep) {
    return InvalidArgumentError("schedule: pieces_per_step " + std::to_string(pieces_per_step) +
                                " is over " + std::to_string(kMaxPiecesPerStep));
  }
  const int64_t pieces = steps * std::max<int64_t>(1, pieces_per_step);
  for (const proto::ActorDef& actor : plan.actor()) {
    SOFTWIRE_RETURN_IF_ERROR(CheckDivides(ActorLabel(actor.name()), actor.period(), pieces, steps));
  }
  for (const proto::RegisterDef& register_def : plan.register_def()) {
    SOFTWIRE_RETURN_IF_ERROR(
        CheckDivides(RegisterLabel(register_def.name()), register_def.period(), pieces, steps));
  }
  proto::Plan resized = plan;
  resized.mutable_schedule()->set_steps(steps);
  for (proto::ActorDef& actor : *resized.mutable_actor()) {
    actor.set_firings(pieces / actor.period());
  }
  return resized;
}

StatusOr<proto::Plan> LimitSteps(const proto::Plan& plan, int64_t steps) {
  if (steps < 1 || steps > plan.schedule().steps()) {
    return InvalidArgumentError("cannot run " + std::to_string(steps) +
                                " steps of a plan made for " +
                                std::to_string(plan.schedule().steps()));
  }
  return WithSteps(plan, steps);
}

}  // namespace plan
}  // namespace softwire
