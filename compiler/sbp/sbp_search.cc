#include "compiler/sbp/sbp_search.h"

#include <limits>

#include "compiler/sbp/sbp_solvers.h"

namespace softwire {
namespace compiler {
namespace {

// The boxing in and out of `op` under `assignment`.
double BoxingAround(SbpProblem& problem, const SbpAssignment& assignment, OpId op) {
  const SbpCandidate& candidate = problem.candidates(op)[assignment[op]];
  return LocalSeconds(problem, assignment, op) - candidate.compute_seconds;
}

void Record(SbpProblem& problem, SbpAssignment& assignment, const SbpAssignment& greedy,
            bool searched, OpId id, LogicalOp& op) {
  const SbpOpEntry& entry = problem.entry(id);
  OpPlacement& placement = op.placement;
  placement.mesh = entry.mesh;
  placement.inputs.clear();
  placement.outputs.clear();
  placement.candidates = 0;
  placement.runner_up.clear();
  placement.runner_up_seconds = 0;
  placement.greedy_choice.clear();
  placement.greedy_boxing_seconds = 0;
  if (entry.kind == SbpOpKind::kUpdate) {
    placement.inputs.assign(op.inputs.size(), problem.OutputLayout(assignment, entry.variable, 0));
    return;
  }
  const SbpCandidate& chosen = problem.candidates(id)[assignment[id]];
  placement.inputs = chosen.inputs;
  placement.outputs = chosen.outputs;
  if (entry.kind != SbpOpKind::kChoice) return;
  placement.compute_seconds = chosen.compute_seconds;
  placement.boxing_seconds = 0;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    placement.boxing_seconds += problem.InputBoxing(assignment, id, static_cast<int>(i));
  }
  const double local = LocalSeconds(problem, assignment, id);
  placement.output_boxing_seconds = local - chosen.compute_seconds - placement.boxing_seconds;
  // What rounding leaves of a difference that is 0.
  if (placement.output_boxing_seconds < 1e-9 * local) placement.output_boxing_seconds = 0;
  const int count = static_cast<int>(problem.candidates(id).size());
  placement.candidates = count;
  const int current = assignment[id];
  double runner_up = std::numeric_limits<double>::infinity();
  for (int j = 0; j < count; ++j) {
    if (j == current) continue;
    assignment[id] = j;
    const double seconds = LocalSeconds(problem, assignment, id);
    if (seconds < runner_up) {
      runner_up = seconds;
      placement.runner_up = CandidateText(problem.candidates(id)[j]);
      placement.runner_up_seconds = seconds;
    }
  }
  assignment[id] = current;
  if (searched && greedy[id] != current) {
    placement.greedy_choice = CandidateText(problem.candidates(id)[greedy[id]]);
    placement.greedy_boxing_seconds = BoxingAround(problem, greedy, id);
  }
}

}  // namespace

Status ChooseSbp(Compilation& compilation, const SbpSearchOptions& options) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<SbpProblem> problem,
                            SbpProblem::Build(compilation, options.filter));
  const SbpAssignment greedy = SolveGreedy(*problem);
  const bool searched = options.method == SbpSearchMethod::kGlobal;
  SbpAssignment assignment = searched ? SolveGlobal(*problem, greedy) : greedy;
  SbpSearchReport& report = compilation.sbp_search;
  report = SbpSearchReport();
  report.method = searched ? "global" : "greedy";
  report.greedy_seconds = problem->Evaluate(greedy);
  report.chosen_seconds = searched ? problem->Evaluate(assignment) : report.greedy_seconds;
  for (OpId id : problem->order()) {
    LogicalOp& op = compilation.graph.mutable_op(id);
    Record(*problem, assignment, greedy, searched, id, op);
    if (problem->entry(id).kind == SbpOpKind::kChoice && assignment[id] != greedy[id]) {
      ++report.ops_changed;
    }
  }
  compilation.placed = true;
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
