// batch_norm_statistics: the running statistics of every batch_norm that has them
// (running_mean, running_var: frozen variables; docs/OPS.md "batch_norm").
//
// Training: per batch_norm, a batch_norm_statistics op computes the batch's mean and unbiased
// variance from its x, each piece; with several pieces per step an accumulate op sums them
// over the step; running_average_update ops (phase-1 consumers, in place, once per step, like
// the optimizer's updates) fold the step's average into the variables:
//   running = (1 - momentum) running + momentum * (sum over the step's pieces) / pieces.
// With one piece per step this is PyTorch's update; with several, PyTorch would update once per
// piece, in sequence. Forward-only jobs: batch_norm normalises with the running statistics
// (`use_running_statistics`), as PyTorch's eval mode.
#include "compiler/ops/graph_builder.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

bool HasRunningStatistics(const LogicalOp& op) {
  return op.type == "batch_norm" && op.inputs.size() == 5;
}

// The step's sum of per-piece `value`: `value` itself with one piece per step.
StatusOr<TensorId> SumOverStep(Compilation& compilation, GraphBuilder& builder, TensorId value) {
  if (compilation.schedule.pieces_per_step == 1) return value;
  OpRequest request;
  request.name = compilation.graph.tensor(value).name + "_accumulate";
  request.type = "accumulate";
  request.inputs = {value};
  request.output_names = {compilation.graph.tensor(value).name + "_accumulated"};
  SOFTWIRE_ASSIGN_OR_RETURN(OpId accumulate, builder.Add(request));
  return compilation.graph.op(accumulate).outputs[0];
}

Status AddRunningUpdates(Compilation& compilation, GraphBuilder& builder, OpId batch_norm) {
  const LogicalOp op = compilation.graph.op(batch_norm);  // A copy: Add may move ops.
  OpRequest statistics;
  statistics.name = op.name + ".statistics";
  statistics.type = "batch_norm_statistics";
  statistics.inputs = {op.inputs[0]};
  statistics.output_names = {op.name + ".batch_mean", op.name + ".batch_var"};
  SOFTWIRE_ASSIGN_OR_RETURN(OpId statistics_op, builder.Add(statistics));
  const std::vector<TensorId> values = compilation.graph.op(statistics_op).outputs;
  for (int k = 0; k < 2; ++k) {
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId step_sum, SumOverStep(compilation, builder, values[k]));
    const TensorId running = op.inputs[3 + k];
    OpRequest update;
    update.name = compilation.graph.tensor(running).name + ".update";
    update.type = "running_average_update";
    update.inputs = {step_sum, running};
    update.attributes.Set("momentum", op.attributes.GetFloat("momentum"));
    update.attributes.Set("scale", 1.0 / static_cast<double>(compilation.schedule.pieces_per_step));
    SOFTWIRE_RETURN_IF_ERROR(builder.Add(update).status());
  }
  return Status::Ok();
}

}  // namespace

Status BatchNormStatisticsPass(Compilation& compilation) {
  GraphBuilder builder(compilation.graph, compilation.registry());
  const int op_count = compilation.graph.op_count();  // Ops added below have no statistics.
  for (OpId id = 0; id < op_count; ++id) {
    if (!HasRunningStatistics(compilation.graph.op(id))) continue;
    if (compilation.schedule.training) {
      SOFTWIRE_RETURN_IF_ERROR(AddRunningUpdates(compilation, builder, id));
    } else {
      compilation.graph.mutable_op(id).attributes.Set("use_running_statistics", true);
    }
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
