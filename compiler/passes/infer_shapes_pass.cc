// infer_shapes: the type of every tensor, op by op in topological order.
#include "compiler/ops/graph_builder.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {

Status InferShapesPass(Compilation& compilation) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<OpId> order, compilation.graph.TopologicalOrder());
  for (OpId op : order) {
    Status inferred = InferOpOutputs(compilation.registry(), compilation.graph, op);
    if (!inferred.ok()) return compilation.OpError(op, inferred.message());
  }
  compilation.types_inferred = true;
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
