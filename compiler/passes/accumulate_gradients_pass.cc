// accumulate_gradients: with several pieces per step, each variable's per-piece gradient is
// summed over the step by an accumulate op (an ACCUMULATE actor whose output holds one value
// per step). With one piece per step the per-piece gradient already is the step's.
#include "compiler/ops/graph_builder.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {

Status AccumulateGradientsPass(Compilation& compilation) {
  if (!compilation.schedule.training) return Status::Ok();
  if (compilation.schedule.pieces_per_step == 1) {
    compilation.step_gradients = compilation.variable_gradients;
    return Status::Ok();
  }
  GraphBuilder builder(compilation.graph, compilation.registry());
  for (const auto& [variable, gradient] : compilation.variable_gradients) {
    const std::string& name = compilation.graph.tensor(variable).name;
    OpRequest request;
    request.name = name + ".grad_accumulate";
    request.type = "accumulate";
    request.inputs = {gradient};
    request.output_names = {name + ".grad_accumulated"};
    SOFTWIRE_ASSIGN_OR_RETURN(OpId accumulate, builder.Add(request));
    compilation.step_gradients[variable] = compilation.graph.op(accumulate).outputs[0];
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
