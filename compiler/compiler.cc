// CompileJob (compiler.h): the standard passes, again with recompute and sharding while a device
// is over its memory budget (memory_budget.h).
#include "compiler/compiler.h"

#include "base/cpu_features.h"
#include "compiler/compilation.h"
#include "compiler/memory_budget.h"
#include "compiler/ops/op_registry.h"
#include "compiler/pass_manager.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {

bool CompileOptions::NativeBf16() const {
  return native_bf16.value_or(DetectCpuFeatures().native_bf16());
}

StatusOr<proto::Plan> CompileJob(const JobFile& job_file, const CompileOptions& options) {
  const OpRegistry registry = MakeStandardOps();
  SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<Compilation> compilation,
                            CompileWithinBudget(job_file, options, registry));
  CHECK(compilation->plan.has_value()) << "the passes ran but emitted no plan";
  return std::move(*compilation->plan);
}

}  // namespace compiler
}  // namespace softwire
