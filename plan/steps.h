// A plan's schedule in pieces, and the one way to run a plan for another number of steps
// (`softwire run --steps`, `softwire simulate --steps`).
//
// Pure functions; thread-safe. They copy the plan and never change their argument.
#ifndef SOFTWIRE_PLAN_STEPS_H_
#define SOFTWIRE_PLAN_STEPS_H_

#include <cstdint>

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace plan {

// steps * pieces_per_step.
int64_t TotalPieces(const proto::Plan& plan);

// A copy of `plan` that runs `steps` steps (>= 1, more or fewer than planned): the schedule and
// every actor's firing count change; slots, memory and everything else stay. InvalidArgument
// when `steps` < 1, or naming the first actor or register whose period does not divide the
// new number of pieces.
StatusOr<proto::Plan> WithSteps(const proto::Plan& plan, int64_t steps);

// WithSteps for an engine that may run fewer steps than planned but not more (its sources and
// memory were planned for the plan's steps): InvalidArgument unless 1 <= steps <= planned.
StatusOr<proto::Plan> LimitSteps(const proto::Plan& plan, int64_t steps);

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_STEPS_H_
