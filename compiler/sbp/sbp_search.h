// ChooseSbp: the choose_sbp pass's work as a function other passes may call again with a
// constrained choice (e.g. a memory pass that forbids replicating a large weight):
//
//   SbpSearchOptions options;
//   options.method = SbpSearchMethod::kGlobal;
//   options.filter = [](const LogicalOp& op, const SbpCandidate& candidate) { ... };
//   SOFTWIRE_RETURN_IF_ERROR(ChooseSbp(compilation, options));
//
// Sets every op's OpPlacement (mesh, nd-sbp of inputs and outputs, the figures --explain
// prints), Compilation::sbp_search and `placed`. Ops must be staged (partition_stages); earlier
// placements are overwritten. Errors: SbpProblem::Build's (bad `sbp` hints, a filter that leaves
// an op nothing).
#ifndef SOFTWIRE_COMPILER_SBP_SBP_SEARCH_H_
#define SOFTWIRE_COMPILER_SBP_SBP_SEARCH_H_

#include "compiler/compilation.h"
#include "compiler/sbp/sbp_problem.h"

namespace softwire {
namespace compiler {

struct SbpSearchOptions {
  SbpSearchMethod method = SbpSearchMethod::kGlobal;
  SbpFilter filter;  // Empty: every candidate allowed.
};

Status ChooseSbp(Compilation& compilation, const SbpSearchOptions& options);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_SBP_SBP_SEARCH_H_
