// CompileJob (compiler.h): one Compilation through the standard passes.
#include "compiler/compiler.h"

#include "base/cpu_features.h"
#include "compiler/compilation.h"
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
  Compilation compilation(job_file, options, registry);
  SOFTWIRE_RETURN_IF_ERROR(PassManager(StandardPasses()).Run(compilation));
  CHECK(compilation.plan.has_value()) << "the passes ran but emitted no plan";
  return std::move(*compilation.plan);
}

}  // namespace compiler
}  // namespace softwire
