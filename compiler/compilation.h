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
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/compiler.h"
#include "compiler/ir/logical_graph.h"
#include "compiler/ir/task_graph.h"
#include "compiler/ops/op_registry.h"
#include "placement/boxing_plan.h"
#include "placement/cluster_model.h"
#include "placement/sbp.h"
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

// Degrees of parallelism (job.proto Parallelism, with CompileOptions.parallel winning).
struct ParallelSettings {
  int data = 1;
  int tensor = 1;
  int pipeline = 1;

  int devices() const { return data * tensor * pipeline; }
};

// How partition_stages cut the forward ops, for --explain.
struct StageReport {
  std::vector<double> stage_seconds;  // Work + incoming transfers of each stage, per piece.
  std::vector<int> forward_ops;       // Forward ops per stage.
  double bottleneck_seconds = 0;
};

// The boxing one consumer requirement of one tensor needs (insert_boxing): from the producer's
// layout to the consumer's, and how (placement/boxing_plan.h). Consumers with the same
// requirement share one edge.
struct BoxingEdge {
  TensorId tensor = -1;
  int from_mesh = -1;
  placement::NdSbp from;
  int to_mesh = -1;
  placement::NdSbp to;
  int stage = 0;  // The first consumer's stage; its actors carry it.
  placement::BoxingPlan plan;
  int bucket = -1;  // The GradientBucket it is fused into, or -1.
};

// Per-step gradient all-reduces fused into one (insert_boxing): the edges' values, flattened
// and concatenated on every device, are all-reduced over `mesh_axis` of `mesh` as one ring,
// then split back (docs/PARALLELISM.md, "Gradient buckets"). An edge's other boxing step, on
// the other mesh axis, runs on its own before packing or after unpacking.
struct GradientBucket {
  static constexpr int kWholeMesh = placement::kMeshAxes;  // A mesh_axis: every device at once.
  int mesh = -1;
  int mesh_axis = 0;       // The ring's mesh axis, or kWholeMesh for (P, P) -> (B, B).
  std::vector<int> edges;  // Into Compilation::boxing, in the order their values complete.
  int64_t bytes = 0;       // Of one device's packed value.
};

// Bytes of one device's arena (plan.proto PlanDevice).
struct DeviceMemoryPlan {
  int64_t register_bytes = 0;
  int64_t workspace_bytes = 0;
  int64_t state_bytes = 0;
  int64_t planned_bytes = 0;
};

// The precision apply_precision resolved (docs/PRECISION.md): FLOAT32 or BF16, and why.
struct PrecisionChoice {
  proto::Precision precision = proto::PRECISION_FLOAT32;
  std::string reason = "the default";
  int casts = 0;         // Cast ops inserted.
  int folded_casts = 0;  // Cast tasks whose later steps the update writes (fold_weight_casts).
  // Activations stored in bfloat16 between convolutions (apply_precision), in graph order,
  // each with why: tensor name, reason.
  std::vector<std::pair<std::string, std::string>> activations;
};

// One region of convolutions choose_layouts laid out (docs/LAYOUTS.md), for --explain.
struct LayoutRegion {
  std::vector<std::string> convolutions;  // Op names, forward and gradients.
  Layout layout = Layout::kPlain;
  std::string reason;  // "chosen by the cost model" or "forced by --layouts nhwc".
  // Estimated seconds per piece of the region's convolutions and reorders: all NCHW (the
  // kernels reorder to their blocked layouts themselves), as chosen, and every candidate.
  double plain_seconds = 0;
  double seconds = 0;
  std::vector<std::pair<Layout, double>> candidates;
  int tensors = 0;  // Tensors of the region stored in another layout than NCHW.
};

// What choose_layouts did.
struct LayoutReport {
  std::string mode = "auto";  // CompileOptions::layouts as applied.
  std::vector<LayoutRegion> regions;
  int reorders = 0;  // Reorder ops inserted.
};

// What choose_sbp did (compiler/sbp/sbp_search.h): the estimated seconds per piece of the
// compute and boxing (SbpProblem::Evaluate, summed, no overlap) under the greedy choice and
// under the choice made.
struct SbpSearchReport {
  std::string method;  // "global" or "greedy".
  double greedy_seconds = 0;
  double chosen_seconds = 0;
  int ops_changed = 0;  // Ops whose layout differs from the greedy choice's.
};

// What the memory budget driver (memory_budget.h) asks of one attempt.
struct BudgetChoices {
  int recompute_limit = 0;     // recompute_activations applies at most this many candidates.
  bool shard_updates = false;  // shard_updates splits updates over the dp axis.
};

// One activation recompute_activations recomputes in the backward pass.
struct RecomputedValue {
  std::string name;  // The register dropped from the forward pass, e.g. "g1@node0/cpu:0".
  int device = -1;
  int64_t bytes = 0;   // Slots x bytes it kept alive from forward to backward.
  double seconds = 0;  // Recompute per piece, by the cost model.
};

// What the budget measures did in one attempt, and, filled by the driver, what each saved.
struct BudgetReport {
  BudgetChoices choices;
  std::vector<int64_t> slot_bytes_saved;    // fit_memory, per device (bytes before reuse).
  int slots_lowered = 0;                    // fit_memory: registers lowered.
  int recompute_candidates = 0;             // recompute_activations: how many it found.
  std::vector<RecomputedValue> recomputed;  // recompute_activations: those applied.
  std::vector<std::string> sharded;         // shard_updates: the variables it split.
  // The driver's: planned bytes per device of the attempt without recompute and sharding, of
  // the one with sharding alone (when tried), and of this one; the attempts it made.
  std::vector<int64_t> planned_without_measures;
  std::vector<int64_t> planned_with_sharding_alone;
  std::vector<int64_t> planned;
  int attempts = 1;
};

// What check_deadlock simulated (docs/DECISIONS.md, "The deadlock check simulates one replica").
struct DeadlockCheckReport {
  int64_t tasks = 0;            // Tasks of the plan.
  int64_t simulated_tasks = 0;  // Tasks simulated: one per orbit when replicas are identical.
  int64_t simulated_firings = 0;
  std::string whole_because;  // Why the plan was simulated whole; empty when it was not.
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

  CompilationSchedule schedule;                    // resolve_schedule
  std::optional<placement::ClusterModel> cluster;  // resolve_cluster
  std::vector<TargetDevice> devices;               // resolve_cluster; resolve_parallelism
                                                   // keeps those the plan uses
  ParallelSettings parallel;                       // resolve_parallelism
  // Stage s's mesh is meshes[s] (resolve_parallelism); choose_sbp appends one-device meshes
  // (sinks).
  std::vector<placement::DeviceMesh> meshes;
  LogicalGraph graph;                               // build_graph, then every graph pass
  OpId job_ops_end = 0;                             // build_graph: ids below are the job's
  OpId backward_ops_begin = 0;                      // autodiff: ids in [begin, end) are the
  OpId backward_ops_end = 0;                        // backward ops it made
  StageReport stage_report;                         // partition_stages
  std::vector<BoxingEdge> boxing;                   // insert_boxing
  std::vector<std::vector<int>> input_boxing;       // insert_boxing: [op][input] -> edge or -1
  std::vector<GradientBucket> gradient_buckets;     // insert_boxing
  std::vector<CompilationOutput> outputs;           // add_sinks
  std::map<TensorId, TensorId> variable_gradients;  // autodiff: variable -> per-piece gradient
  std::map<OpId, TensorId> gradient_sums;           // autodiff: seed/add_n op -> the tensor
                                                    // whose gradient it makes
  std::map<TensorId, TensorId> step_gradients;      // accumulate_gradients: variable -> per step
  PrecisionChoice precision;                        // apply_precision
  LayoutReport layouts;                             // choose_layouts
  SbpSearchReport sbp_search;                       // choose_sbp
  TaskGraph tasks;                                  // expand_physical, then every task pass
  int64_t ordering_edges = 0;                       // order_weight_gradients: edges added
  std::vector<DeviceMemoryPlan> device_memory;      // plan_memory; index = device id
  std::map<int, int64_t> view_bytes;   // fold_views: device id -> one fill of each copy folded
  DeadlockCheckReport deadlock_check;  // check_deadlock
  std::optional<proto::Plan> plan;     // emit_plan
  BudgetReport budget;                 // fit_memory, recompute_activations, shard_updates,
                                       // meet_budget; `budget.choices` by memory_budget.h

  // How far the pipeline got, so Verify checks what should hold by now.
  bool types_inferred = false;     // infer_shapes
  bool periods_assigned = false;   // infer_periods
  bool staged = false;             // partition_stages
  bool placed = false;             // choose_sbp
  bool registers_planned = false;  // plan_registers
  bool memory_planned = false;     // plan_memory

  // "path:LINE: message" (or "path: message" when line is 0), as InvalidArgument.
  Status ErrorAt(int line, const std::string& message) const;
  // "path:LINE: op 'fc1': message" for job ops; for compiler-made ops the line is omitted and
  // the forward op is named: "path: op 'fc1.grad_a' (gradient of 'fc1'): message".
  Status OpError(OpId op, const std::string& message) const;

  // Re-checks everything that should hold at this point of the pipeline. Internal on the
  // first broken invariant. The emitted plan is checked whole (CheckEmittedPlan) only when a
  // pass marked it changed since the last check.
  Status Verify() const;

  // Every pass that sets or changes `plan` calls this, so that the next Verify checks it again
  // (a large plan's check costs as much as emitting it; passes after share_memory only read).
  void MarkPlanChanged() { ++plan_version_; }

  // The graphs as text, for dumps after a pass.
  std::string Dump() const;

 private:
  Status VerifyLogicalAnnotations() const;
  Status VerifyPlacement(const LogicalOp& op) const;

  // What the logical graph's last check saw: its version and how far the pipeline was; the
  // check is skipped while both are the same.
  struct LogicalCheckKey {
    int64_t graph_version = -1;
    bool types_inferred = false;
    bool periods_assigned = false;
    bool staged = false;
    bool placed = false;
    int64_t total_pieces = 0;
    int64_t pipeline = 0;
    int64_t meshes = 0;
    int64_t devices = 0;
    bool operator==(const LogicalCheckKey& other) const {
      return graph_version == other.graph_version && types_inferred == other.types_inferred &&
             periods_assigned == other.periods_assigned && staged == other.staged &&
             placed == other.placed && total_pieces == other.total_pieces &&
             pipeline == other.pipeline && meshes == other.meshes && devices == other.devices;
    }
  };
  mutable LogicalCheckKey verified_logical_;
  // The task graph structure last verified whole; later checks of an unchanged structure check
  // only its annotations (the emitted plan is checked whole again).
  mutable int64_t verified_task_structure_ = -1;
  // The registers' annotations as last checked (TaskGraph::annotation_version), and whether
  // slots were planned then; an unchanged pair skips VerifyAnnotations.
  mutable int64_t verified_task_annotations_ = -1;
  mutable bool verified_task_slots_ = false;
  mutable int64_t verified_task_pieces_ = -1;  // total_pieces at the last structural check.
  // The plan as MarkPlanChanged last counted it, and as Verify last checked it.
  int64_t plan_version_ = 0;
  mutable int64_t verified_plan_version_ = -1;

  const JobFile& job_file_;
  const CompileOptions& options_;
  const OpRegistry& registry_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_COMPILATION_H_
