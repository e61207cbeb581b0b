// resolve_schedule: how many pieces flow and how they group into steps.
#include "compiler/passes/passes.h"
#include "plan/steps.h"

namespace softwire {
namespace compiler {
namespace {

Status RequirePositive(const Compilation& compilation, int line, const std::string& field,
                       int64_t value) {
  if (value >= 1) return Status::Ok();
  return compilation.ErrorAt(line, field + " must be >= 1, got " + std::to_string(value));
}

// The plan's limits (plan/steps.h): checked here so the error names the job's field.
Status RequireAtMost(const Compilation& compilation, int line, const std::string& field,
                     int64_t value, int64_t limit) {
  if (value <= limit) return Status::Ok();
  return compilation.ErrorAt(
      line, field + " must be at most " + std::to_string(limit) + ", got " + std::to_string(value));
}

Status ResolveTraining(Compilation& compilation) {
  const proto::Training& train = compilation.job().train();
  const CompileOptions& options = compilation.options();
  const int line = compilation.job_file().train_line;
  CompilationSchedule& schedule = compilation.schedule;
  schedule.training = true;
  schedule.steps = options.steps > 0 ? options.steps : train.steps();
  schedule.micro_batch_size = train.micro_batch_size();
  schedule.pieces_per_step =
      options.micro_batches_per_step > 0
          ? options.micro_batches_per_step
          : (train.micro_batches_per_step() == 0 ? 1 : train.micro_batches_per_step());
  SOFTWIRE_RETURN_IF_ERROR(RequirePositive(compilation, line, "train.steps", schedule.steps));
  SOFTWIRE_RETURN_IF_ERROR(
      RequirePositive(compilation, line, "train.micro_batch_size", schedule.micro_batch_size));
  SOFTWIRE_RETURN_IF_ERROR(
      RequirePositive(compilation, line, "train.micro_batches_per_step", schedule.pieces_per_step));
  SOFTWIRE_RETURN_IF_ERROR(RequireAtMost(
      compilation, line, options.steps > 0 ? "steps (the --steps override)" : "train.steps",
      schedule.steps, plan::kMaxSteps));
  return RequireAtMost(compilation, line,
                       options.micro_batches_per_step > 0
                           ? "micro-batches per step (the --micro-batches override)"
                           : "train.micro_batches_per_step",
                       schedule.pieces_per_step, plan::kMaxPiecesPerStep);
}

Status ResolveForwardOnly(Compilation& compilation) {
  CompilationSchedule& schedule = compilation.schedule;
  schedule.training = false;
  schedule.steps =
      compilation.options().steps > 0 ? compilation.options().steps : compilation.job().steps();
  schedule.micro_batch_size = compilation.job().micro_batch_size();
  schedule.pieces_per_step = 1;
  SOFTWIRE_RETURN_IF_ERROR(
      RequirePositive(compilation, 0, "steps (of a job without `train`)", schedule.steps));
  SOFTWIRE_RETURN_IF_ERROR(RequireAtMost(compilation, 0,
                                         compilation.options().steps > 0
                                             ? "steps (the --steps override)"
                                             : "steps (of a job without `train`)",
                                         schedule.steps, plan::kMaxSteps));
  return RequirePositive(compilation, 0, "micro_batch_size (of a job without `train`)",
                         schedule.micro_batch_size);
}

}  // namespace

Status ResolveSchedulePass(Compilation& compilation) {
  if (compilation.job().has_train()) return ResolveTraining(compilation);
  return ResolveForwardOnly(compilation);
}

}  // namespace compiler
}  // namespace softwire
