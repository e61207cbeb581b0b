// The reference interpreter: runs a plan sequentially in double precision, with the reference
// kernels, the same datasets and the same initial values as the runtime. It is the "plain
// sequential execution of the same graph" that end-to-end tests compare the engine against.
// It reads plans only (never the compiler), like the runtime. Plans for many devices of one
// node run too: every device's registers live in one process, copy actors run their kernel
// (`copy`, or `slice` for a slice-copy) and boxing actors theirs (docs/OPS.md).
//
//   StatusOr<ReferenceResult> result = RunReferencePlan(plan, {});
//   for (const ReferenceStep& step : result->steps) ... step.loss ...
#ifndef SOFTWIRE_REFERENCE_INTERPRETER_REFERENCE_INTERPRETER_H_
#define SOFTWIRE_REFERENCE_INTERPRETER_REFERENCE_INTERPRETER_H_

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/data_root.h"
#include "proto/plan.pb.h"
#include "reference/kernels/reference_tensor.h"

namespace softwire {
namespace reference {

struct ReferenceStep {
  int64_t step = 0;
  double loss = 0;                        // Mean over the step's pieces; 0 without a loss.
  std::map<std::string, double> outputs;  // Every PlanOutput (loss included), step mean.
};

struct ReferenceResult {
  std::vector<ReferenceStep> steps;
  // Final value of every variable (PlanVariable name), stitched from its parts.
  std::map<std::string, ReferenceTensor> variables;
};

struct ReferenceOptions {
  int64_t steps = -1;  // Override the plan's step count when >= 0 (must not exceed it).
  // Where the plan's data paths resolve (data/data_root.h), as RunOptions::data_root for the
  // engine. Empty: a plan with a relative data path fails, naming the source or variable.
  data::DataRoot data_root;
};

// Fails (naming the actor) on a kernel error, and with Unimplemented for actor kinds it does
// not model (send and recv: plans of several nodes).
StatusOr<ReferenceResult> RunReferencePlan(const proto::Plan& plan,
                                           const ReferenceOptions& options);

}  // namespace reference
}  // namespace softwire

#endif  // SOFTWIRE_REFERENCE_INTERPRETER_REFERENCE_INTERPRETER_H_
