// AssignDevices: a compiled plan moved onto other devices of the same kinds. A job service
// compiles a job for the first K devices of its cluster, then runs it on whichever K are free:
// actors name devices by index, so only the plan's device list changes (node, name, cores and
// memory budget of each), and the plan runs there as compiled.
//
//   std::vector<proto::PlanDevice> free = {server_devices[2], server_devices[3]};
//   Status moved = AssignDevices(free, &plan);   // plan.device(0) is now node0/cpu:2, ...
//
// Pure function.
#ifndef SOFTWIRE_PLAN_DEVICE_ASSIGNMENT_H_
#define SOFTWIRE_PLAN_DEVICE_ASSIGNMENT_H_

#include <vector>

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace plan {

// Renames plan device i to `targets[i]` (node, name; cores and memory budget too), keeping its
// id, kind and planned bytes. InvalidArgument, naming both, when the counts differ, a target's
// kind differs from its device's, two targets are one device, or a target's memory budget
// (non-zero) is below the device's planned bytes. `plan` is unchanged on error.
Status AssignDevices(const std::vector<proto::PlanDevice>& targets, proto::Plan* plan);

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_DEVICE_ASSIGNMENT_H_
