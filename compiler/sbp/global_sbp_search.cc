// SolveGlobal and RefineAssignment (sbp_solvers.h): a dynamic program over the graph in
// topological order, back-tracking, and refinement by single-op moves.
#include <algorithm>
#include <limits>
#include <unordered_map>

#include "compiler/sbp/sbp_solvers.h"

namespace softwire {
namespace compiler {
namespace {

using placement::NdSbp;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A layout a tensor is offered in, and the least cost of the ops up to it that give it so.
struct Offer {
  NdSbp layout;
  double seconds = 0;
};

bool Movable(const SbpProblem& problem, OpId op) {
  const SbpOpEntry& entry = problem.entry(op);
  return (entry.kind == SbpOpKind::kChoice || entry.kind == SbpOpKind::kVariable) &&
         entry.candidates->size() > 1;
}

// Readers of `op`'s outputs that the dynamic program weighs (choice ops).
int ChoiceReaders(const SbpProblem& problem, TensorId tensor) {
  int readers = 0;
  for (const TensorUse& use : problem.graph().tensor(tensor).consumers) {
    readers += problem.entry(use.op).kind == SbpOpKind::kChoice ? 1 : 0;
  }
  return readers;
}

void AddOffer(std::vector<Offer>& offers, const NdSbp& layout, double seconds) {
  for (Offer& offer : offers) {
    if (offer.layout != layout) continue;
    offer.seconds = std::min(offer.seconds, seconds);
    return;
  }
  offers.push_back({layout, seconds});
}

// Phase 1: per op, the cost table of its candidates.
std::vector<std::vector<double>> ForwardTables(SbpProblem& problem) {
  const LogicalGraph& graph = problem.graph();
  std::vector<std::vector<Offer>> offers(graph.tensor_count());
  std::vector<std::vector<double>> tables(graph.op_count());
  std::unordered_map<int, double> input_cost;
  for (OpId id : problem.order()) {
    const SbpOpEntry& entry = problem.entry(id);
    const LogicalOp& op = graph.op(id);
    if (entry.kind == SbpOpKind::kSink || entry.kind == SbpOpKind::kUpdate) continue;
    const std::vector<SbpCandidate>& candidates = *entry.candidates;
    std::vector<double>& table = tables[id];
    table.assign(candidates.size(), 0);
    for (size_t j = 0; j < candidates.size(); ++j) table[j] = candidates[j].compute_seconds;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const TensorId tensor = op.inputs[i];
      const int from_mesh = problem.ProducerMesh(id, static_cast<int>(i));
      const double share = 1.0 / std::max(1, ChoiceReaders(problem, tensor));
      input_cost.clear();
      for (size_t j = 0; j < candidates.size(); ++j) {
        const NdSbp& wanted = candidates[j].inputs[i];
        auto [found, inserted] = input_cost.emplace(SbpKey(wanted), 0.0);
        if (inserted) {
          double least = kInfinity;
          for (const Offer& offer : offers[tensor]) {
            least = std::min(
                least, offer.seconds * share +
                           problem.Boxing(tensor, from_mesh, offer.layout, entry.mesh, wanted));
          }
          found->second = least;
        }
        table[j] += found->second;
      }
    }
    for (size_t o = 0; o < op.outputs.size(); ++o) {
      for (size_t j = 0; j < candidates.size(); ++j) {
        AddOffer(offers[op.outputs[o]], candidates[j].outputs[o], table[j]);
      }
    }
  }
  return tables;
}

// The boxing of the consumers of `op`'s outputs, with `op` at `assignment[op]`, counting only
// the consumers `decided` marks (all when null).
double OutputBoxing(SbpProblem& problem, const SbpAssignment& assignment, OpId op,
                    const std::vector<bool>* decided) {
  const LogicalGraph& graph = problem.graph();
  double seconds = 0;
  for (TensorId output : graph.op(op).outputs) {
    for (const TensorUse& use : graph.tensor(output).consumers) {
      if (decided != nullptr && !(*decided)[use.op]) continue;
      if (problem.entry(use.op).kind == SbpOpKind::kUpdate &&
          problem.entry(use.op).variable == op) {
        continue;  // The update's own variable: its boxing is the update's (below).
      }
      seconds += problem.InputBoxing(assignment, use.op, use.input_index);
    }
  }
  const SbpOpEntry& entry = problem.entry(op);
  if (entry.kind == SbpOpKind::kVariable && entry.update >= 0) {
    seconds += problem.OpSeconds(assignment, entry.update);
  }
  return seconds;
}

// Phase 2: choices from the sinks back.
SbpAssignment BackTrack(SbpProblem& problem, const std::vector<std::vector<double>>& tables) {
  const LogicalGraph& graph = problem.graph();
  SbpAssignment assignment(graph.op_count(), 0);
  std::vector<bool> decided(graph.op_count(), false);
  for (OpId id : problem.order()) {
    const SbpOpKind kind = problem.entry(id).kind;
    decided[id] = kind == SbpOpKind::kSink || kind == SbpOpKind::kSource;
  }
  const std::vector<OpId>& order = problem.order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const OpId id = *it;
    const SbpOpEntry& entry = problem.entry(id);
    if (entry.kind != SbpOpKind::kChoice && entry.kind != SbpOpKind::kVariable) continue;
    double best_seconds = kInfinity;
    int best = 0;
    for (size_t j = 0; j < entry.candidates->size(); ++j) {
      assignment[id] = static_cast<int>(j);
      const double seconds = tables[id][j] + OutputBoxing(problem, assignment, id, &decided);
      if (seconds < best_seconds) {
        best_seconds = seconds;
        best = static_cast<int>(j);
      }
    }
    assignment[id] = best;
    decided[id] = true;
    if (entry.update >= 0) decided[entry.update] = true;
  }
  return assignment;
}

}  // namespace

double LocalSeconds(SbpProblem& problem, const SbpAssignment& assignment, OpId op) {
  return problem.OpSeconds(assignment, op) + OutputBoxing(problem, assignment, op, nullptr);
}

void RefineAssignment(SbpProblem& problem, SbpAssignment* assignment, int max_rounds) {
  const LogicalGraph& graph = problem.graph();
  std::vector<bool> dirty(graph.op_count(), true);
  for (int round = 0; round < max_rounds; ++round) {
    bool changed = false;
    for (OpId id : problem.order()) {
      if (!dirty[id]) continue;
      dirty[id] = false;
      if (!Movable(problem, id)) continue;
      const int current = (*assignment)[id];
      const double current_seconds = LocalSeconds(problem, *assignment, id);
      double best_seconds = current_seconds;
      int best = current;
      const int count = static_cast<int>(problem.candidates(id).size());
      for (int j = 0; j < count; ++j) {
        if (j == current) continue;
        (*assignment)[id] = j;
        const double seconds = LocalSeconds(problem, *assignment, id);
        if (seconds < best_seconds) {
          best_seconds = seconds;
          best = j;
        }
      }
      // Only a clear gain moves, so rounding cannot cycle.
      if (best != current && best_seconds < current_seconds * (1 - 1e-9)) {
        (*assignment)[id] = best;
        changed = true;
        const LogicalOp& op = graph.op(id);
        for (TensorId input : op.inputs) dirty[graph.tensor(input).producer] = true;
        for (TensorId output : op.outputs) {
          for (const TensorUse& use : graph.tensor(output).consumers) {
            dirty[use.op] = true;
            const SbpOpEntry& reader = problem.entry(use.op);
            if (reader.kind == SbpOpKind::kUpdate) dirty[reader.variable] = true;
          }
        }
        const SbpOpEntry& entry = problem.entry(id);
        if (entry.update >= 0) {
          for (TensorId input : graph.op(entry.update).inputs) {
            dirty[graph.tensor(input).producer] = true;
          }
        }
      } else {
        (*assignment)[id] = current;
      }
    }
    if (!changed) break;
  }
}

SbpAssignment SolveGlobal(SbpProblem& problem, const SbpAssignment& seed) {
  SbpAssignment searched = BackTrack(problem, ForwardTables(problem));
  RefineAssignment(problem, &searched);
  SbpAssignment refined_seed = seed;
  RefineAssignment(problem, &refined_seed);
  SbpAssignment best = seed;
  double best_seconds = problem.Evaluate(seed);
  for (SbpAssignment* candidate : {&searched, &refined_seed}) {
    const double seconds = problem.Evaluate(*candidate);
    if (seconds < best_seconds) {
      best_seconds = seconds;
      best = *candidate;
    }
  }
  return best;
}

}  // namespace compiler
}  // namespace softwire
