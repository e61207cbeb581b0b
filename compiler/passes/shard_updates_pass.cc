// shard_updates: budget measure 3 (docs/PARALLELISM.md, "A memory budget the compiler meets"):
// optimizer state and gradients sharded over the data-parallel devices, as ZeRO stages 1 and 2
// do, expressed in the nd-sbp the placement passes already speak.
//
// After choose_sbp, when Compilation::budget.choices.shard_updates and dp > 1: every variable an
// sgd_update or adam_update writes, replicated (B) on the dp axis and split on no tensor axis
// by tp, is laid out S(k) on the dp axis instead, k the first tensor axis dp divides, and its
// update reads both inputs that way. insert_boxing then does the rest with the boxing it has:
// the gradient, partial (P) over dp, reaches the update as placement::PlanGradientSync plans
// every gradient: all-reduced in a gradient bucket, then sliced to the shard (a reduce-scatter
// instead planned more bytes: docs/PARALLELISM.md); the update and its optimizer state
// (moments) hold 1/dp of the variable; every reader of the variable, which still wants it
// replicated, reads it through one all-gather (S(k) -> B) a step, which is the weights' all-gather
// before the next forward. Variables that tp splits, or that split evenly on no axis, stay as they
// were.
//
// With the budget's sharding asked for, choose_sbp (compiler/sbp/sbp_problem.cc) already offers
// such variables only sharded (ShardedOverDataParallel), so the global search lays out the rest
// of the graph around the sharded weights (docs/DECISIONS.md, "Sharded updates are a constraint
// of the sbp search"): its dp layout otherwise computes weight gradients whole from gathered
// activations, where sharding alone after the fact saved nothing. This pass then finds them
// sharded, records them, and rewrites only what the search left replicated (none today; kept
// for a solver that does not take the constraint).
#include "compiler/passes/passes.h"
#include "compiler/sbp/sbp_problem.h"

namespace softwire {
namespace compiler {

Status ShardUpdatesPass(Compilation& compilation) {
  BudgetReport& report = compilation.budget;
  report.sharded.clear();
  if (!report.choices.shard_updates || compilation.parallel.data <= 1) return Status::Ok();
  LogicalGraph& graph = compilation.graph;
  for (OpId id = 0; id < static_cast<OpId>(graph.ops().size()); ++id) {
    const LogicalOp& update = graph.op(id);
    if (update.type != "sgd_update" && update.type != "adam_update") continue;
    const OpId variable_id = graph.tensor(update.inputs[1]).producer;
    const LogicalOp& variable = graph.op(variable_id);
    if (variable.type != "variable" || variable.placement.outputs.empty()) continue;
    const placement::DeviceMesh& mesh = compilation.meshes[variable.placement.mesh];
    const placement::NdSbp& layout = variable.placement.outputs[0];
    if (mesh.shape[0] <= 1) continue;
    if (layout[0].is_split()) {  // Sharded by the search.
      graph.mutable_op(id).placement.inputs = {layout, layout};
      report.sharded.push_back(variable.name);
      continue;
    }
    const placement::NdSbp sharded =
        ShardedOverDataParallel(layout, graph.tensor(variable.outputs[0]), mesh);
    if (sharded == layout) continue;
    graph.mutable_op(variable_id).placement.outputs[0] = sharded;
    graph.mutable_op(id).placement.inputs = {sharded, sharded};
    report.sharded.push_back(variable.name);
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
