// The two ways choose_sbp solves an SbpProblem (sbp_problem.h); `--sbp-search greedy|global`.
//
// Greedy (the choice before the search, kept for A/B): ops in topological order, each taking
// the candidate with the least compute + input boxing from its producers' layouts (the first on
// ties); a variable takes the layout its first reader wants, charged to that reader as the
// variable's gradient sync instead of boxing. Myopic: it never weighs what its choice costs the
// consumers.
//
// Global: minimizes SbpProblem::Evaluate (compute + every boxing, per piece) over the whole graph:
//   1. a topological dynamic program: per candidate, its compute plus, per input, the least over
//      the layouts the producer offers of (their cost so far + the boxing into this candidate's
//      input layout); a tensor read by k ops offers each of them 1/k of its cost, so shared
//      ancestors count once in total. Exact on chains and trees (Viterbi).
//   2. back-tracking in reverse topological order: each op takes the candidate with the least
//      table cost + boxing into the consumers already decided (variables last, with their
//      gradient's boxing into the update);
//   3. refinement: single-op moves (a variable moves with its update) that lower the exact
//      total, until none does; each strictly lowers Evaluate, so it ends.
// The same refinement runs from `seed` too, and the cheapest of the three (search, refined
// seed, seed) wins, so the result never estimates worse than the seed.
//
// Both take O(ops x candidates x edges) boxing look-ups, memoized by the problem.
#ifndef SOFTWIRE_COMPILER_SBP_SBP_SOLVERS_H_
#define SOFTWIRE_COMPILER_SBP_SBP_SOLVERS_H_

#include "compiler/sbp/sbp_problem.h"

namespace softwire {
namespace compiler {

SbpAssignment SolveGreedy(SbpProblem& problem);

SbpAssignment SolveGlobal(SbpProblem& problem, const SbpAssignment& seed);

// Single-op moves that lower problem.Evaluate, until none does or `max_rounds` sweeps ran.
void RefineAssignment(SbpProblem& problem, SbpAssignment* assignment, int max_rounds = 50);

// The seconds per piece that depend on `op`'s choice under `assignment`: its candidate's
// seconds, its inputs' boxing and the boxing of its consumers' inputs it produces (a variable:
// with its update's).
double LocalSeconds(SbpProblem& problem, const SbpAssignment& assignment, OpId op);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_SBP_SBP_SOLVERS_H_
