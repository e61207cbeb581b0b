// fold_weight_casts: under bf16, the optimizer update writes the next step's bfloat16 copy of
// its variable in the pass over memory that updates the float32 master (docs/PRECISION.md,
// "The update writes the bf16 copy"), so the per-step cast of the variable does no work after
// the first step.
//
// Contract:
// - What folds: an update task (sgd_update or adam_update) U reading its variable's register W
//   in phase 1, and a cast task C on U's device, in U's period and stage, on the compute queue,
//   that reads W (the very register, phase 0, not through a view) and writes a plain bfloat16
//   register B of W's shape, read only in phase 0 (the products). One cast per update.
// - What it becomes: U also reads B, in phase 1, as its third kernel input (docs/OPS.md,
//   sgd_update/adam_update "copy"): after the products of the step released B, U updates the
//   weight and writes each updated element, rounded to bfloat16 as the cast rounds it, into B.
//   C gets `first_firing_only: true`: its kernel casts on the first firing it runs (the first
//   step, or the first step after a resume, which restored only W) and later firings write
//   nothing, as a variable actor's do. B keeps its value from step to step, so
//   plan_registers gives it one slot and share_memory never lays anything over it (both
//   because of its phase-1 reader). Numerics are bit for bit those of the unfolded plan: B
//   holds the rounding of the same float32 values.
// - Not folded: a cast that reaches U's weight through a copy or boxing (another device, or
//   another sbp), or whose copy something reads in phase 1 already; those stay per-step casts.
//   Off with CompileOptions::fold_weight_casts = false (`--no-weight-cast-folding`).
//
// Runs on the task graph after fuse_elementwise (a cast read in phase 1 would not fuse anyway)
// and before plan_registers, which plans B's one slot. Counts the folds in
// Compilation::precision.folded_casts.
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

bool IsOptimizerUpdate(const TaskDef& task) {
  return task.kind == proto::ACTOR_KIND_UPDATE &&
         (task.op_type == "sgd_update" || task.op_type == "adam_update") && task.inputs.size() == 2;
}

bool ReadsAsItsRegister(const TaskGraph& tasks, const TaskDef& task, size_t input) {
  return task.input_types.empty() ||
         task.input_types[input] == tasks.register_at(task.inputs[input]).type;
}

// The cast of `update`'s weight register that may fold into it, or -1.
TaskId FoldableCast(const TaskGraph& tasks, const TaskDef& update) {
  const RegisterId weight = update.inputs[1];
  const TaskRegister& weight_register = tasks.register_at(weight);
  if (weight_register.type.dtype != DType::kFloat32 ||
      weight_register.type.layout != Layout::kPlain || !ReadsAsItsRegister(tasks, update, 1)) {
    return -1;
  }
  for (const RegisterReader& reader : weight_register.readers) {
    const TaskDef& cast = tasks.task(reader.task);
    if (reader.phase != 0 || cast.kind != proto::ACTOR_KIND_COMPUTE || cast.op_type != "cast" ||
        cast.inputs.size() != 1 || cast.outputs.size() != 1 || cast.queue != 0 ||
        cast.device != update.device || cast.period != update.period ||
        cast.stage != update.stage || !ReadsAsItsRegister(tasks, cast, 0) ||
        cast.attributes.Contains("first_firing_only")) {
      continue;
    }
    const TaskRegister& copy = tasks.register_at(cast.outputs[0]);
    if (copy.type.dtype != DType::kBFloat16 || copy.type.layout != Layout::kPlain ||
        copy.type.shape != weight_register.type.shape || copy.period != weight_register.period) {
      continue;
    }
    bool phase_zero_only = true;
    for (const RegisterReader& copy_reader : copy.readers) {
      phase_zero_only &= copy_reader.phase == 0 && copy_reader.task != update.id;
    }
    if (phase_zero_only) return cast.id;
  }
  return -1;
}

}  // namespace

Status FoldWeightCastsPass(Compilation& compilation) {
  if (!compilation.options().fold_weight_casts ||
      compilation.precision.precision != proto::PRECISION_BF16) {
    return Status::Ok();
  }
  TaskGraph& tasks = compilation.tasks;
  const size_t count = tasks.tasks().size();
  for (TaskId id = 0; id < static_cast<TaskId>(count); ++id) {
    if (!IsOptimizerUpdate(tasks.task(id))) continue;
    const TaskId cast = FoldableCast(tasks, tasks.task(id));
    if (cast < 0) continue;
    tasks.AddReader(tasks.task(cast).outputs[0], id, 1);
    tasks.mutable_task(cast).attributes.Set("first_firing_only", AttributeValue(true));
    ++compilation.precision.folded_casts;
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
