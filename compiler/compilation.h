// Compilation: the state one CompileJob call threads through its passes.
//
// It borrows the job, the options and the op registry, and owns everything the passes build:
// the schedule, the target devices, the logical graph, the task graph and finally the plan.
// Each field names the pass that fills it; a pass may read what earlier passes filled.
//
// Threading: one compilation is used by one thread. Failure: the error helpers build the
// InvalidArgument messages of bad input, "file:LINE: op 'fc1': message"; Verify() reports
// broken invariants as Internal.
#ifndef SOFTWIRE_COMPILER_COMPILATION_H_
#define SOFTWIRE_COMPILER_COMPILATION_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/compiler.h"
#include "compiler/ir/logical_graph.h"
#include "compiler/ir/task_graph.h"
#include "compiler/ops/op_registry.h"
#include "proto/cluster.pb.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace compiler {

// How many pieces flow and how they group into steps (plan.proto Schedule).
struct CompilationSchedule {
  bool training = false;
  int64_t steps = 0;
  int64_t micro_batch_size = 0;
  int64_t pieces_per_step = 1;

  int64_t total_pieces() const { return steps * pieces_per_step; }
};

// A device the plan may use, with the cost model's figures filled in.
struct TargetDevice {
  int id = -1;  // Index in Compilation::devices.
  std::string node;
  proto::DeviceSpec spec;  // flops and memory_bandwidth are never 0 here.

  // "node0/cpu:0".
  std::string FullName() const { return node + "/" + spec.name(); }
};

// Bytes of one device's arena (plan.proto PlanDevice).
struct DeviceMemoryPlan {
  int64_t register_bytes = 0;
  int64_t workspace_bytes = 0;
  int64_t state_bytes = 0;
  int64_t planned_bytes = 0;
};

// A value reported every step, and the sink op that observes it.
struct CompilationOutput {
  std::string name;
  bool is_loss = false;
  OpId sink = -1;
};

class Compilation {
 public:
  // Borrows all three; they must outlive the compilation.
  Compilation(const JobFile& job_file, const CompileOptions& options, const OpRegistry& registry);

  const JobFile& job_file() const { return job_file_; }
  const proto::Job& job() const { return job_file_.job; }
  const CompileOptions& options() const { return options_; }
  const OpRegistry& registry() const { return registry_; }

  CompilationSchedule schedule;                     // resolve_schedule
  std::vector<TargetDevice> devices;                // resolve_cluster
  LogicalGraph graph;                               // build_graph, then every graph pass
  std::vector<CompilationOutput> outputs;           // add_sinks
  std::map<TensorId, TensorId> variable_gradients;  // autodiff: variable -> per-piece gradient
  std::map<TensorId, TensorId> step_gradients;      // accumulate_gradients: variable -> per step
  TaskGraph tasks;                                  // expand_physical, then every task pass
  std::vector<DeviceMemoryPlan> device_memory;      // plan_memory; index = device id
  std::optional<proto::Plan> plan;                  // emit_plan

  // How far the pipeline got, so Verify checks what should hold by now.
  bool types_inferred = false;     // infer_shapes
  bool periods_assigned = false;   // infer_periods
  bool placed = false;             // placement
  bool registers_planned = false;  // plan_registers
  bool memory_planned = false;     // plan_memory

  // "path:LINE: message" (or "path: message" when line is 0), as InvalidArgument.
  Status ErrorAt(int line, const std::string& message) const;
  // "path:LINE: op 'fc1': message" for job ops; for compiler-made ops the line is omitted and
  // the forward op is named: "path: op 'fc1.grad_a' (gradient of 'fc1'): message".
  Status OpError(OpId op, const std::string& message) const;

  // Re-checks everything that should hold at this point of the pipeline. Internal on the
  // first broken invariant.
  Status Verify() const;

  // The graphs as text, for dumps after a pass.
  std::string Dump() const;

 private:
  Status VerifyLogicalAnnotations() const;

  const JobFile& job_file_;
  const CompileOptions& options_;
  const OpRegistry& registry_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_COMPILATION_H_
