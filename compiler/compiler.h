// The compiler's public entry points: job file -> Job -> Plan.
//
//   StatusOr<JobFile> job_file = ParseJobFile("demos/digits/digits.pbtxt");
//   if (!job_file.ok()) { std::cerr << job_file.status().message(); return 2; }
//   CompileOptions options;                                 // Default: one cpu device.
//   options.cluster = *placement::LoadClusterSpec("2cpu");  // placement/cluster_spec.h
//   options.parallel.set_data_parallel(2);
//   StatusOr<proto::Plan> plan = CompileJob(*job_file, options);
//
// Errors name the file, the line where known, the op and the field, e.g.
//   "digits.pbtxt:14: op 'fc1': input 'x2' is not produced by any op, source or variable".
// The compiler's only output is the plan; nothing here runs anything.
#ifndef SOFTWIRE_COMPILER_COMPILER_H_
#define SOFTWIRE_COMPILER_COMPILER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/cluster.pb.h"
#include "proto/job.pb.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace compiler {

// A parsed job plus where it came from, so later errors can point at lines.
struct JobFile {
  proto::Job job;
  std::string path;                     // As given; "" when built in memory.
  std::string directory;                // Relative data paths resolve against this.
  std::map<std::string, int> op_lines;  // Op name -> 1-based line of its `op {` block.
  std::map<std::string, int> variable_lines;
  std::map<std::string, int> source_lines;  // Source name -> line of its `source {` block.
  // Lines by position in job.op / job.variable / job.source, so an error about the second of
  // two blocks with one name points at that block. Empty when the job was built in memory.
  std::vector<int> op_line_at;
  std::vector<int> variable_line_at;
  std::vector<int> source_line_at;
  std::vector<int> metric_line_at;  // Line of each `metric:` entry.
  int train_line = 0;               // Line of the `train {` block; 0 when unknown.
};

// Reads and parses a text-format job. Syntax errors and unknown fields carry file:line:column.
StatusOr<JobFile> ParseJobFile(const std::string& path);

// Parses job text held in memory; `display_name` stands in for the path in errors.
StatusOr<JobFile> ParseJobText(const std::string& text, const std::string& display_name,
                               const std::string& directory);

// How choose_sbp picks every op's nd-sbp (`--sbp-search`, docs/PARALLELISM.md "Sbp").
enum class SbpSearchMethod {
  kGlobal,  // The search over the whole graph for the least estimated step time.
  kGreedy,  // Each op the cheapest given its producers, in topological order (to compare).
};

struct CompileOptions {
  // Devices available. Empty: one node "node0" with one cpu device "cpu:0". The CLI's
  // `--cluster SPEC` is placement::LoadClusterSpec(SPEC) (placement/cluster_spec.h): a cluster
  // text file or a shorthand such as "4cpu", "2x4cpu", "8sim" or "2x4sim:16GiB".
  proto::Cluster cluster;
  // Overrides of the job's fields; <= 0 keeps the job's value. micro_batches_per_step applies
  // to training jobs (a forward-only job has one piece per step).
  int64_t steps = 0;
  int64_t micro_batches_per_step = 0;
  // Degrees of parallelism (`--dp`, `--tp`, `--pp`); each degree > 0 here wins over the job's
  // `parallel` section (docs/PARALLELISM.md). `--micro-batches` is micro_batches_per_step.
  proto::Parallelism parallel;
  // Pass names after which to write the graph as text into `dump_directory`.
  std::vector<std::string> dump_after;
  std::string dump_directory;
  // Log each pass's name and duration.
  bool log_passes = false;
  // Lifetime-based reuse (share_memory pass, `--no-memory-reuse` turns it off): registers that
  // are never live together share bytes.
  bool share_memory = true;
  // Views (fold_views pass, `--no-views` turns it off): a reshape, and a transpose a matmul can
  // read through its transpose flag, become no actor: their readers read the input's register.
  bool fold_views = true;
  // In-place ops (share_memory pass, `--no-in-place` turns it off): an element-wise op that is
  // its input's last reader writes its output over the input's slot. Needs share_memory.
  bool in_place = true;
  // Activations recomputed in the backward pass whatever the memory budget (`--recompute N`;
  // recompute_activations pass): at least the N ranked first, -1 every candidate; 0 leaves it
  // to the budget driver (compiler/memory_budget.h), which recomputes only to fit a budget.
  int32_t recompute = 0;
  // Op fusion (fuse_elementwise pass, `--no-fusion` turns it off): chains of element-wise ops
  // on one device become one `fused` actor that walks memory once.
  bool fuse_elementwise = true;
  // Product epilogues (fuse_elementwise pass; `--no-epilogues` turns them off, `--no-fusion`
  // too): a chain may start with the matmul that feeds it, which then runs it on each band of
  // its rows as it computes them (docs/OPS.md "fused").
  bool fuse_epilogues = true;
  // Ordering edges (order_weight_gradients pass, `--no-ordering-edges` turns them off): the
  // next backward op on a weight-gradient product's device waits for it (an ordering input),
  // so it runs right after its data gradient and what it reads dies as the backward pass goes
  // (docs/PROTOCOL.md, "Ordering inputs").
  bool ordering_edges = true;
  // Under bf16, the optimizer update writes the next step's bfloat16 copy of its variable in
  // its pass over the weight, and the variable's cast casts on the first step only
  // (fold_weight_casts pass, `--no-weight-cast-folding` turns it off; docs/PRECISION.md).
  bool fold_weight_casts = true;
  // Under bf16, activations between convolutions stay bfloat16 (apply_precision,
  // docs/PRECISION.md "Activations between convolutions"); false (`--no-bf16-activations`)
  // casts every convolution input and keeps float32 outputs, as before, to compare.
  bool bf16_activations = true;
  // Slots of each source output register (`--source-slots N`, plan_registers pass): 0 lets
  // the compiler choose, 2 where the next piece's fill can overlap this piece's work (a device
  // that runs launches asynchronously, or a plan over several devices) and 1 where it cannot
  // (one cpu device, one kernel at a time); 1 or 2 forces that count (to compare). A source
  // output read in the backward pass of a pipeline still gets its stage's p - s slots, and one
  // a copy reads 2; fit_memory may still lower 2 to 1.
  int32_t source_slots = 0;
  // Firings each compute and copy actor may have in flight (`--max-in-flight`, ActorDef
  // max_in_flight, docs/PROTOCOL.md "Several firings in flight"); 1: one at a time. Register
  // slots are not raised for it.
  int32_t max_in_flight = 1;
  // The products' element type (`--precision`, docs/PRECISION.md); PRECISION_UNSPECIFIED keeps
  // the job's. PRECISION_AUTO picks bf16 where `native_bf16` says the cpu has it.
  proto::Precision precision = proto::PRECISION_UNSPECIFIED;
  // Whether the cpu that will run the plan has native bf16, for PRECISION_AUTO. Unset: this
  // machine's (base/cpu_features.h DetectCpuFeatures). Tests set it to force either answer.
  std::optional<bool> native_bf16;
  // `native_bf16`, else this machine's answer: the one decision that both `--precision auto`
  // and the cost model's cpu bf16 rate (placement DefaultsFor) take.
  bool NativeBf16() const;
  // Layouts of the image batches between convolutions (`--layouts`, choose_layouts pass,
  // docs/LAYOUTS.md): "auto" lets the cost model choose per region of convolutions; "nchw"
  // keeps every tensor plain (the kernels reorder around each convolution); "nhwc" or
  // "nChw16c" forces that layout wherever it fits.
  std::string layouts = "auto";
  // The sbp choice (choose_sbp pass): the global search, or the greedy per-op choice.
  SbpSearchMethod sbp_search = SbpSearchMethod::kGlobal;
};

// Validates, differentiates, places and plans `job_file`. Fails with InvalidArgument for bad
// input (naming file, line, op, field), ResourceExhausted when the plan cannot fit a device's
// memory (naming the device and bytes), FailedPrecondition when it could deadlock.
StatusOr<proto::Plan> CompileJob(const JobFile& job_file, const CompileOptions& options);

// What `softwire compile --explain` prints: the parallel settings, each pipeline stage's
// devices and estimated seconds, every op's stage, devices and nd-sbp with the compute and
// boxing seconds that chose it (and the runner-up), and every boxing edge with its method and
// cost. Runs the passes up to the boxing insertion; fails like CompileJob does.
StatusOr<std::string> ExplainPlacement(const JobFile& job_file, const CompileOptions& options);

// A readable summary: devices with planned memory, actor counts by kind, and a table of
// actors with their registers, slots and bytes. What `softwire compile JOB` prints.
// Each device's line is followed by what its planned bytes hold (plan/memory_breakdown.h).
std::string SummarizePlan(const proto::Plan& plan);

// The summary's figures as one JSON object (`softwire compile --json`): the job, schedule,
// actor counts and, per device, planned, register, workspace and state bytes with the memory
// split of plan/memory_breakdown.h ("split" sums to "planned_bytes") and what views, reuse and
// in-place ops saved.
std::string SummarizePlanJson(const proto::Plan& plan);

// The whole plan as stable readable text, one actor per block; golden tests compare it.
std::string DumpPlan(const proto::Plan& plan);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_COMPILER_H_
