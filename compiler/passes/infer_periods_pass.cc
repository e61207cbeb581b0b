// infer_periods: pieces per firing of every op and pieces per value of every tensor.
//
// Variables, fills and updates are per step (period = pieces_per_step); an accumulate fires
// per piece and holds one value per step; an op that reads only per-step values is per step
// too (e.g. a transpose of a weight, or the scaled loss seed), since recomputing it every
// piece would give the same value; everything else is per piece.
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

int64_t OpPeriod(const Compilation& compilation, const LogicalOp& op, PeriodRule rule) {
  const int64_t per_step = compilation.schedule.pieces_per_step;
  switch (rule) {
    case PeriodRule::kPerStep:
      return per_step;
    case PeriodRule::kPerPiece:
    case PeriodRule::kAccumulate:
      return 1;
    case PeriodRule::kFollowInputs:
      break;
  }
  if (op.inputs.empty()) return 1;
  for (TensorId input : op.inputs) {
    if (compilation.graph.tensor(input).period != per_step) return 1;
  }
  return per_step;
}

}  // namespace

Status InferPeriodsPass(Compilation& compilation) {
  LogicalGraph& graph = compilation.graph;
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<OpId> order, graph.TopologicalOrder());
  for (OpId id : order) {
    LogicalOp& op = graph.mutable_op(id);
    PeriodRule rule = compilation.registry().Find(op.type)->period_rule;
    op.period = OpPeriod(compilation, op, rule);
    int64_t output_period =
        rule == PeriodRule::kAccumulate ? compilation.schedule.pieces_per_step : op.period;
    for (TensorId output : op.outputs) graph.mutable_tensor(output).period = output_period;
  }
  compilation.periods_assigned = true;
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
