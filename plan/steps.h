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

// The largest schedule a plan may have, refused by the compiler (naming the job's field) and by
// CheckIds (plan/plan_invariants.h) for plans from elsewhere, so that no input can ask for
// hours or gigabytes before anything runs:
//   pieces per step: the deadlock check and the register lifetimes of the arena layout check
//     walk two steps firing by firing; 4096 micro-batches per step is far beyond what a
//     pipeline needs to hide its bubble (docs/PARALLELISM.md).
//   steps: every firing count (steps * pieces_per_step) then fits in int64 with room to spare.
constexpr int64_t kMaxPiecesPerStep = 4096;
constexpr int64_t kMaxSteps = int64_t{1} << 40;

// steps * pieces_per_step. The schedule is within the limits above (CheckIds accepted it).
int64_t TotalPieces(const proto::Plan& plan);

// A copy of `plan` that runs `steps` steps (1 to kMaxSteps, more or fewer than planned): the
// schedule and every actor's firing count change; slots, memory and everything else stay.
// InvalidArgument when `steps` is out of range, or naming the first actor or register whose period
// does not divide the new number of pieces.
StatusOr<proto::Plan> WithSteps(const proto::Plan& plan, int64_t steps);

// WithSteps for an engine that may run fewer steps than planned but not more (its sources and
// memory were planned for the plan's steps): InvalidArgument unless 1 <= steps <= planned.
StatusOr<proto::Plan> LimitSteps(const proto::Plan& plan, int64_t steps);

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_STEPS_H_
