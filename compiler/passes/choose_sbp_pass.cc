// choose_sbp: the device mesh of every op and the nd-sbp of each of its inputs and outputs
// (docs/PARALLELISM.md, "Sbp"), by ChooseSbp (compiler/sbp/sbp_search.h) with the method
// CompileOptions::sbp_search names: the global search (default) or the greedy per-op choice.
//
// Ops run on their stage's mesh, except sinks, which read a B value on the first device of
// their stage. Sources are (S(0), B). Every other op takes one candidate nd signature (one of
// the op's 1D signatures per mesh axis of extent > 1, with every split even), weighed by
// compute seconds per piece on the mesh plus the seconds per piece of boxing
// (placement::PlanBoxing: bandwidth and per-step latency). A variable is replicated (B) on the
// dp axis, which is what data parallelism means (each replica holds every parameter; gradients
// come out partial there and the update's need for B inserts their all-reduce); on the tp axis
// it is B or split on one tensor axis, and a replicated one is charged the per-step all-reduce
// of its gradient over the tp group, so large weights tend to be split across it (tensor
// parallelism). Update ops take their variable's layout for both inputs. An `sbp` hint on a
// job op fixes its first output's nd-sbp: "S(0), B" names one sbp per mesh axis (dp, tp); a
// single entry names the one mesh axis of extent > 1.
#include "compiler/passes/passes.h"
#include "compiler/sbp/sbp_search.h"

namespace softwire {
namespace compiler {

Status ChooseSbpPass(Compilation& compilation) {
  SbpSearchOptions options;
  options.method = compilation.options().sbp_search;
  return ChooseSbp(compilation, options);
}

}  // namespace compiler
}  // namespace softwire
