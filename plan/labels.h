// How every message of softwire names what it is about: "actor 'relu'", "register 'x'", with
// the id when the reader needs it to find the entry in a plan dump ("actor 'relu' (2)").
//
// Pure functions of their arguments; thread-safe.
#ifndef SOFTWIRE_PLAN_LABELS_H_
#define SOFTWIRE_PLAN_LABELS_H_

#include <cstdint>
#include <string>

#include "proto/plan.pb.h"

namespace softwire {
namespace plan {

// "actor 'relu'".
std::string ActorLabel(const std::string& name);
// "actor 'relu' (2)".
std::string ActorLabel(const std::string& name, int64_t id);
// "actor 'relu' (2)": name and id of `actor`.
std::string ActorLabel(const proto::ActorDef& actor);

// "register 'x'".
std::string RegisterLabel(const std::string& name);
// "register 'x' (0)".
std::string RegisterLabel(const std::string& name, int64_t id);
// "register 'x' (0)": name and id of `register_def`.
std::string RegisterLabel(const proto::RegisterDef& register_def);

// "source", "compute", "variable", "accumulate", "update", "sink", "copy", "send", "recv",
// "boxing"; "unspecified" for ACTOR_KIND_UNSPECIFIED and "unknown" for a value that is no kind.
const char* ActorKindName(proto::ActorKind kind);

// "cpu", "sim", "cuda"; "unspecified" for DEVICE_KIND_UNSPECIFIED and "unknown" for a value
// that is no kind.
const char* DeviceKindName(proto::DeviceKind kind);

// "node0/cpu:0" (the name alone when the device has no node).
std::string DeviceName(const proto::PlanDevice& device);
// "device 0 (node0/cpu:0)".
std::string DeviceLabel(const proto::PlanDevice& device);

// The name of kernel thread `thread` of a device, short because Linux keeps only the first 15
// bytes of a thread's name (the runtime names its threads so, and the trace labels the
// device's tracks with it):
// "sw:cpu0/k1" for node0 (or no node), "sw:n1cpu0/k1" for node1, the node's name otherwise.
std::string DeviceThreadName(const proto::PlanDevice& device, int thread);

}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_LABELS_H_
