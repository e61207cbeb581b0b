// SolveGreedy (sbp_solvers.h): the per-op choice in topological order.
#include <limits>

#include "compiler/sbp/sbp_solvers.h"

namespace softwire {
namespace compiler {

SbpAssignment SolveGreedy(SbpProblem& problem) {
  const LogicalGraph& graph = problem.graph();
  SbpAssignment assignment(graph.op_count(), 0);
  std::vector<bool> variable_placed(graph.op_count(), false);
  std::vector<int> variable_choice;  // Per input of the current op: -1, or the variable's layout.
  std::vector<int> best_variable_choice;
  for (OpId id : problem.order()) {
    const SbpOpEntry& entry = problem.entry(id);
    if (entry.kind != SbpOpKind::kChoice) continue;
    const LogicalOp& op = graph.op(id);
    const std::vector<SbpCandidate>& candidates = problem.candidates(id);
    double best_total = std::numeric_limits<double>::infinity();
    int best = 0;
    for (size_t j = 0; j < candidates.size(); ++j) {
      assignment[id] = static_cast<int>(j);
      variable_choice.assign(op.inputs.size(), -1);
      double boxing = 0;
      bool allowed = true;
      for (size_t i = 0; i < op.inputs.size() && allowed; ++i) {
        const OpId producer = graph.tensor(op.inputs[i]).producer;
        if (problem.entry(producer).kind == SbpOpKind::kVariable && !variable_placed[producer]) {
          // The variable takes this layout, if a variable may lie so.
          const std::vector<SbpCandidate>& layouts = problem.candidates(producer);
          allowed = false;
          for (size_t v = 0; v < layouts.size(); ++v) {
            if (layouts[v].outputs[0] != candidates[j].inputs[i]) continue;
            allowed = true;
            variable_choice[i] = static_cast<int>(v);
            boxing += layouts[v].gradient_sync_seconds;
          }
        } else {
          boxing += problem.InputBoxing(assignment, id, static_cast<int>(i));
        }
      }
      if (!allowed) continue;
      const double total = candidates[j].compute_seconds + boxing;
      if (total < best_total) {
        best_total = total;
        best = static_cast<int>(j);
        best_variable_choice = variable_choice;
      }
    }
    assignment[id] = best;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (best_total == std::numeric_limits<double>::infinity() || best_variable_choice[i] < 0) {
        continue;
      }
      const OpId variable = graph.tensor(op.inputs[i]).producer;
      assignment[variable] = best_variable_choice[i];
      variable_placed[variable] = true;
    }
  }
  return assignment;
}

}  // namespace compiler
}  // namespace softwire
