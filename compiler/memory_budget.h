// Meeting each device's memory budget (the cluster spec's memory_bytes; docs/PARALLELISM.md,
// "A memory budget the compiler meets").
//
// CompileWithinBudget runs the standard passes; when a device's planned bytes (after
// lifetime-based reuse) exceed its budget it compiles again with more savings, in this order,
// and keeps the first plan that fits:
//   1. fewer slots: fit_memory lowers slots, largest registers first (every attempt does);
//   2. recompute: recompute_activations drops kept activations of cheap element-wise ops and
//      recomputes them in the backward pass, the most bytes per second of recompute first;
//      prefixes of that ranking are tried (1, 2, 4, ... candidates, then all);
//   3. sharding: shard_updates splits every trainable variable's update, its optimizer state
//      and its gradient over the data-parallel axis (ZeRO stages 1 and 2), first alone, then
//      with recompute prefixes as above.
// When nothing fits it fails with ResourceExhausted naming the device, the least bytes any
// attempt reached on it and its budget. Compilation::budget says what was chosen and what each
// measure saved (bytes per device); `compile --explain` prints it (DescribeBudget).
//
// Threading: like CompileJob. Cost: one compilation when nothing is over budget (or no device
// has one); otherwise up to about 2 log2(candidates) + 4.
#ifndef SOFTWIRE_COMPILER_MEMORY_BUDGET_H_
#define SOFTWIRE_COMPILER_MEMORY_BUDGET_H_

#include <memory>
#include <string>

#include "base/status.h"
#include "compiler/compilation.h"

namespace softwire {
namespace compiler {

// The compilation that fits (its plan emitted), or the error of the last attempt (bad input,
// deadlock, ...) or ResourceExhausted when no attempt fits.
StatusOr<std::unique_ptr<Compilation>> CompileWithinBudget(const JobFile& job_file,
                                                           const CompileOptions& options,
                                                           const OpRegistry& registry);

// The `memory budget:` lines of `compile --explain`: each device's budget, which measures were
// chosen and what each saved per device; "" when no device has a budget.
std::string DescribeBudget(const Compilation& compilation);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_MEMORY_BUDGET_H_
