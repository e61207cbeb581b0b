// PlanFacts: what the trace tools need to know about the plan that ran, carried inside every
// trace file (otherData.plan) so `softwire trace summary FILE` needs nothing but the file.
//
// The analysis derives waits, occupancy and flows from these facts and what engines record,
// with the fill arithmetic of docs/PROTOCOL.md (plan/fill_arithmetic.h), the only protocol
// knowledge trace/ has.
#ifndef SOFTWIRE_TRACE_PLAN_FACTS_H_
#define SOFTWIRE_TRACE_PLAN_FACTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace trace {

struct DeviceFacts {
  std::string name;  // "node0/cpu:0".
  std::string node;  // "node0".
  std::string kind;  // "cpu", "cuda", "sim".
  int64_t planned_bytes = 0;
  int64_t register_bytes = 0;
  int64_t workspace_bytes = 0;
  int64_t state_bytes = 0;
  // cpu devices: the names of the threads that run its kernels, "sw:cpu0/k*" (the runtime's
  // names, plan::DeviceThreadName); empty for other kinds and in facts read back from a file.
  std::string kernel_threads;
};

struct ActorFacts {
  std::string name;
  std::string kind;     // "compute", "copy", ... (ActorKind without its prefix, lower case).
  std::string op_type;  // The kernel's op type; a fused kernel's names its ops:
                        // "fused: bias_add+relu" (docs/OPS.md "fused").
  int32_t device = 0;
  int32_t queue = 0;
  int32_t stage = 0;
  int64_t period = 1;
  int64_t firings = 0;
  std::vector<int32_t> inputs;   // Register ids, kernel order.
  std::vector<int32_t> outputs;  // Register ids, kernel order.
  int64_t workspace_bytes = 0;
  int64_t state_bytes = 0;
};

struct RegisterFacts {
  std::string name;
  int32_t producer = -1;
  int32_t device = 0;
  int32_t slots = 1;
  int64_t bytes_per_slot = 0;
  // Element type of the value it holds: "float32", "int32", "bfloat16" (mixed precision,
  // docs/PRECISION.md); "" in facts read from a file written before the field existed.
  std::string dtype;
  int64_t period = 1;
  std::vector<int32_t> consumers;  // Phase-0 consumers, plan order.
  int32_t phase1_consumer = -1;    // The in-place writer, or -1.
};

struct PlanFacts {
  std::string job_name;
  int64_t steps = 0;
  int64_t pieces_per_step = 1;
  int64_t micro_batch_size = 0;
  std::vector<DeviceFacts> devices;
  std::vector<ActorFacts> actors;
  std::vector<RegisterFacts> registers;

  int64_t total_pieces() const { return steps * pieces_per_step; }
  // Distinct pipeline stages among the actors (>= 1).
  int stages() const;
};

// The facts of `plan`. The plan must have passed the engine's checks (ids in range).
PlanFacts DescribePlan(const proto::Plan& plan);

// Checks the facts read from a file: ids in range, periods >= 1, slots >= 1. The error names
// the first offending actor or register.
Status CheckPlanFacts(const PlanFacts& facts);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_PLAN_FACTS_H_
