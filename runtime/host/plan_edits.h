// Reading and adjusting a loaded plan on the runtime side: running fewer steps than planned,
// and reading the variables' final values out of their registers.
#ifndef SOFTWIRE_RUNTIME_HOST_PLAN_EDITS_H_
#define SOFTWIRE_RUNTIME_HOST_PLAN_EDITS_H_

#include <cstdint>
#include <map>
#include <string>

#include "base/npy.h"
#include "base/status.h"
#include "proto/plan.pb.h"
#include "runtime/host/actor_binding.h"

namespace softwire {
namespace runtime {

// A copy of `plan` that runs `steps` steps (1 <= steps <= the plan's): the schedule and every
// actor's firing count shrink; slots, memory and everything else stay. InvalidArgument when
// `steps` is out of range or a period would no longer divide the job's pieces.
StatusOr<proto::Plan> LimitSteps(const proto::Plan& plan, int64_t steps);

// The value every PlanVariable holds now, its parts stitched into the logical shape, by name.
// Reads the slot each part's register filled last. Call only while no actor runs. Variables
// with a part in a register without memory (a sim device's) are left out.
StatusOr<std::map<std::string, NpyArray>> ReadVariables(const proto::Plan& plan,
                                                        const RegisterSlots& slots);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_PLAN_EDITS_H_
