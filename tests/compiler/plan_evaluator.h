// EvaluatePlan: runs a plan's actors one at a time in double precision, to check that a plan
// for many devices computes what the single-device plan of the same job computes. For the
// compiler's tests only: it trusts the plan's order and periods instead of running the
// protocol (the engines and the reference interpreter do that).
//
// Per step: the per-step actors that need no piece (variables, the loss seed, boxing of
// weights) in plan order, then every piece's per-piece actors in plan order, then the per-step
// actors after the step's gradients (their boxing), then the updates. Kernels: the reference
// kernels (reference/kernels), with the physical attributes of docs/OPS.md (divisor,
// index_begin, partial) applied around them, plus copy, slice, assemble, flat_split and
// flat_concat written out here; sources and variables from data/.
#ifndef SOFTWIRE_TESTS_COMPILER_PLAN_EVALUATOR_H_
#define SOFTWIRE_TESTS_COMPILER_PLAN_EVALUATOR_H_

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace compiler {

struct PlanValues {
  // Per step, per PlanOutput name: the mean over the step's pieces.
  std::vector<std::map<std::string, double>> outputs;
  // Each variable's final value, stitched from its parts (row-major).
  std::map<std::string, std::vector<double>> variables;
};

// Runs `steps` steps (at most the plan's). Fails naming the actor on a kernel error.
StatusOr<PlanValues> EvaluatePlan(const proto::Plan& plan, int64_t steps);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_TESTS_COMPILER_PLAN_EVALUATOR_H_
