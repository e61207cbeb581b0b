// The compiler's passes, in the order StandardPasses() runs them. Each is one function with
// the PassManager signature, in its own file named after it. A pass reads what the passes
// before it filled in the Compilation (compilation.h names who fills what) and returns
// InvalidArgument for bad input, naming file, line, op and field.
//
// Many devices (docs/PARALLELISM.md): resolve_parallelism fixes the meshes; partition_stages,
// choose_sbp and insert_boxing place the logical graph (asking placement/); expand_physical
// makes one task per device of each op's mesh plus the boxing tasks; plan_registers,
// fit_memory and check_deadlock derive and prove the slots.
#ifndef SOFTWIRE_COMPILER_PASSES_PASSES_H_
#define SOFTWIRE_COMPILER_PASSES_PASSES_H_

#include <vector>

#include "base/status.h"
#include "compiler/compilation.h"
#include "compiler/pass_manager.h"

namespace softwire {
namespace compiler {

// Steps, micro-batch size and pieces per step from the job and CompileOptions overrides;
// fails on values < 1.
Status ResolveSchedulePass(Compilation& compilation);

// The target devices from CompileOptions.cluster (or the default one-cpu cluster), with the
// cost model's default figures filled in; fails on unnamed or duplicate nodes and devices.
Status ResolveClusterPass(Compilation& compilation);

// Degrees of data, tensor and pipeline parallelism (CompileOptions.parallel over the job's
// `parallel`), the devices they use and one [dp][tp] mesh per stage. Fails on negative
// degrees, more devices than the cluster has, or a micro-batch that dp does not divide.
Status ResolveParallelismPass(Compilation& compilation);

// The logical graph from the job: one op per source, variable and job op, every attribute
// checked against its op's schema and completed with defaults. Fails on unknown op types,
// wrong input or output counts, unknown/missing/ill-typed attributes, duplicate op or tensor
// names, inputs nobody produces, bad source or variable declarations, and cycles.
Status BuildGraphPass(Compilation& compilation);

// Output types of every op in topological order, from its definition. Fails naming the op and
// the input or attribute at fault (shape or dtype mismatch).
Status InferShapesPass(Compilation& compilation);

// A sink op for the loss and for every metric. Fails when the loss or a metric does not exist
// or is not a scalar float32 tensor.
Status AddSinksPass(Compilation& compilation);

// Training only: reverse-mode gradients of the loss for every trainable variable, seeded with
// fill(1), summing several contributions with add_n, computing only gradients that reach a
// trainable variable. Fails when an op between a trainable variable and the loss has no
// gradient rule, or when the loss does not depend on a trainable variable.
Status AutodiffPass(Compilation& compilation);

// Training with pieces_per_step > 1: an accumulate op per variable gradient.
Status AccumulateGradientsPass(Compilation& compilation);

// Training only: an sgd_update or adam_update op per trainable variable, with the optimizer's
// attributes and gradient_scale = 1 / pieces_per_step. Fails on bad optimizer settings.
Status OptimizerPass(Compilation& compilation);

// batch_norms with running statistics: in training, ops that fold each step's batch statistics
// into running_mean and running_var; forward-only, batch_norm normalises with them.
Status BatchNormStatisticsPass(Compilation& compilation);

// The precision policy (docs/PRECISION.md): --precision over the job's field, AUTO resolved
// against the cpu; under bf16 every float32 input of a matmul or batch_matmul read through one
// cast to bfloat16 per tensor (per step for variables). float32 changes nothing.
Status ApplyPrecisionPass(Compilation& compilation);

// Gives every op distinct input tensors: an op that reads one tensor at several inputs (add_n
// of equal contributions, mul(x, x)) reads identity copies at the later ones, because a
// consumer appears once per register in a plan.
Status SeparateRepeatedInputsPass(Compilation& compilation);

// Pieces per firing of every op and per value of every tensor: per step for variables, fills,
// updates, accumulated gradients and whatever only reads per-step values; per piece otherwise.
Status InferPeriodsPass(Compilation& compilation);

// Every op's role (forward, backward, ...) and pipeline stage: forward ops by dynamic
// programming over their topological order (pinned `stage`s kept), the rest following the op
// they serve. Fails when a pin is out of range or runs against the data flow.
Status PartitionStagesPass(Compilation& compilation);

// Every op's mesh and the nd-sbp of its inputs and outputs, cheapest by the cost model in
// topological order; variables take their first reader's choice; `sbp` hints win. Fails when a
// hint names a layout the op cannot produce.
Status ChooseSbpPass(Compilation& compilation);

// The memory layout of every image batch between convolutions (docs/LAYOUTS.md): per region of
// convolutions joined through batch_norm, element-wise and pooling ops, the cheapest of NCHW,
// NHWC and nChw16c by the cost model (or CompileOptions::layouts), with `reorder` ops where
// layouts meet, at the job's boundaries (which stay NCHW) and around boxing (which moves plain
// tensors only). Fails on an unknown CompileOptions::layouts.
Status ChooseLayoutsPass(Compilation& compilation);

// Budget measure 3 (compiler/memory_budget.h), when Compilation::budget.choices.shard_updates:
// every trainable variable whose dp axis is replicated and that splits evenly over it is laid
// out split over dp (S on the axis its tp split uses, else the first even axis), its update and
// optimizer state with it (1/dp), its readers all-gathering it once a step and its gradient
// sliced after the sync (ZeRO stages 1 and 2). Names the variables in budget.sharded.
Status ShardUpdatesPass(Compilation& compilation);

// A BoxingEdge for every op input laid out differently from how its producer left it.
Status InsertBoxingPass(Compilation& compilation);

// The task graph: one task per device of each op's mesh with local shapes and attributes,
// the boxing edges' copy and boxing tasks, one register per task output, readers and phases.
Status ExpandPhysicalPass(Compilation& compilation);

// Views: a reshape task, a transpose of the last two axes read only by matmuls (their transpose
// flag flipped), and a transpose keeping the last axis last read only by batch_matmuls (read
// strided: a_perm/b_perm) are removed; their readers read the input's register instead
// (TaskDef::input_types). So is a flat_split read only by transfers and boxing tasks: each
// reader reads its chunk as a byte range of the input's register (TaskDef::input_offsets).
// Off with CompileOptions::fold_views = false.
Status FoldViewsPass(Compilation& compilation);

// Budget measure 2 (compiler/memory_budget.h): kept activations of cheap element-wise compute
// tasks (relu, gelu, bias_add, add, scale) whose inputs the backward pass keeps anyway are
// recomputed there instead: a `fused` clone reads the same inputs and, as an ordering input, a
// gradient its first backward reader reads, and every backward reader reads the clone's value.
// Candidates rank by bytes saved per second of recompute; the first
// budget.choices.recompute_limit (or CompileOptions::recompute, -1: all) are applied. Runs only
// for training jobs with a memory budget or CompileOptions::recompute set. Records the count
// and those applied in Compilation::budget.
Status RecomputeActivationsPass(Compilation& compilation);

// Op fusion: maximal chains of element-wise compute tasks on one device (bias_add, add, add_n,
// scale, relu, gelu, their gradients, casts) become one `fused` task whose kernel walks memory
// once (docs/OPS.md "fused"); intermediate values read only inside a chain lose their registers,
// values read outside it stay its outputs. A chain may start with the matmul whose output it
// reads, which then runs the chain on each band of rows it computes (a product epilogue; off
// with CompileOptions::fuse_epilogues = false, `--no-epilogues`). Never makes a cycle
// (fuse_elementwise_pass.cc says how). Off with CompileOptions::fuse_elementwise = false
// (`--no-fusion`).
Status FuseElementwisePass(Compilation& compilation);

// Under bf16: an optimizer update reads its variable's per-step bfloat16 copy in phase 1 and
// writes it while it updates the weight, in the same pass over memory; the cast that made the
// copy then casts on its first firing only (`first_firing_only`). Only where the cast reads the
// update's very weight register on its device (fold_weight_casts_pass.cc). Off with
// CompileOptions::fold_weight_casts = false (`--no-weight-cast-folding`).
Status FoldWeightCastsPass(Compilation& compilation);

// Ordering edges (docs/PROTOCOL.md, "Ordering inputs"): each weight-gradient product (a
// backward compute task whose output reaches an optimizer update through transfers, sums,
// transposes, reshapes and casts) becomes an ordering input of the backward compute tasks on its
// device that read an output of its siblings (the other backward readers of the gradient it reads:
// the data-gradient product), so it fires before the backward pass goes on and the activations it
// reads die as backward goes. Also, each backward compute task reading the loss gradient's seed
// (a fill that reads nothing) gets the loss as an ordering input where both fire at one period on
// one device, so the backward pass starts after the loss. Never makes a cycle (weight-gradient
// edges only forward in a topological order; the loss edge only where the reader does not reach
// the loss).
// Training only; off with CompileOptions::ordering_edges = false (`--no-ordering-edges`). Counts
// the edges in Compilation::ordering_edges.
Status OrderWeightGradientsPass(Compilation& compilation);

// Copies between devices of different nodes become send/recv pairs joined by a wire register on
// the destination device (insert_send_recv_pass.cc). No change for single-node plans.
Status InsertSendRecvPass(Compilation& compilation);

// Slots (pipeline depth, transfers, per-step values) and bytes per slot of every register.
Status PlanRegistersPass(Compilation& compilation);

// Lowers slots toward 1, largest registers first, on devices whose registers and state side by
// side exceed their memory budget; records the bytes saved in Compilation::budget. Never fails
// (meet_budget judges the fit after reuse).
Status FitMemoryPass(Compilation& compilation);

// Offsets in each device's arena (registers, then workspaces, then actor state) and each
// device's totals.
Status PlanMemoryPass(Compilation& compilation);

// Seconds per firing of every task by the cost model.
Status EstimateCostsPass(Compilation& compilation);

// Runs the firing rule on the task graph for up to two steps and fails with
// FailedPrecondition, naming the stuck actors and what each waits for, if it cannot finish.
Status CheckDeadlockPass(Compilation& compilation);

// The proto::Plan.
Status EmitPlanPass(Compilation& compilation);

// Lifetime-based reuse on the emitted plan: per device, registers that can never be live at the
// same time under any firing order the protocol allows (plan/register_lifetimes.h) share
// bytes, each overlapping pair listed in shares_bytes_with; workspaces and actor state move
// down behind the registers. Adds no dependency; a plan too large to analyze keeps its layout.
Status ShareMemoryPass(Compilation& compilation);

// Each device's planned bytes (after share_memory) into Compilation::budget.planned; fails with
// ResourceExhausted (OverBudgetMessage) on the first device over its memory budget.
Status MeetBudgetPass(Compilation& compilation);

// "device 'node0/cpu:0': the plan needs at least N bytes (...) but its memory budget is B bytes
// (...); largest registers: ...", for `device` of an emitted plan, `least_bytes` the fewest
// planned bytes any attempt reached there.
std::string OverBudgetMessage(const Compilation& compilation, int device, int64_t least_bytes);

// Every pass above, in order, with the names CompileOptions.dump_after uses.
std::vector<Pass> StandardPasses();

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_PASSES_PASSES_H_
