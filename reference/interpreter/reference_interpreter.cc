// RunReferencePlan walks the plan piece by piece. Within a piece it visits actors in
// OrderActors' order and fires each as long as its next firing lies in the pieces reached so
// far and PlanRun::CanFire holds: every input fill is complete, an in-place writer's readers
// are done with the fill, and a variable's next fill waits for the writer of the previous one.
// These are the protocol's conditions without slots, so the reference computes what any engine
// run computes, one firing at a time. Fills are values, not shared buffers: the update writes
// the variable actor's own value, which its next firing offers, so no reader ever sees a
// half-updated weight whatever the order.
#include "reference/interpreter/reference_interpreter.h"

#include "reference/interpreter/plan_run.h"

namespace softwire {
namespace reference {

StatusOr<ReferenceResult> RunReferencePlan(const proto::Plan& plan,
                                           const ReferenceOptions& options) {
  const int64_t plan_steps = plan.schedule().steps();
  if (options.steps > plan_steps) {
    return InvalidArgumentError("reference: " + std::to_string(options.steps) +
                                " steps asked, but the plan has " + std::to_string(plan_steps));
  }
  PlanRun run(plan, options.steps >= 0 ? options.steps : plan_steps, options.data_root);
  SOFTWIRE_RETURN_IF_ERROR(run.Prepare());
  SOFTWIRE_RETURN_IF_ERROR(run.Run());
  return run.Result();
}

}  // namespace reference
}  // namespace softwire
