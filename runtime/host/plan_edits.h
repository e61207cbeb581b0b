// Reading a loaded plan's results on the runtime side: the variables' final values out of their
// registers. (Running fewer steps than planned is plan::LimitSteps, plan/steps.h.)
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

// The value every PlanVariable holds now, its parts stitched into the logical shape, by name.
// Reads the slot each part's register filled last. Call only while no actor runs. Variables
// with a part in a register without memory (a sim device's) are left out.
StatusOr<std::map<std::string, NpyArray>> ReadVariables(const proto::Plan& plan,
                                                        const RegisterSlots& slots);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_PLAN_EDITS_H_
