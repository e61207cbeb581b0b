// separate_repeated_inputs: in a plan an actor is a register's consumer at most once, so an
// op must not read one tensor at two inputs. mul(x, x), or add_n over two equal gradient
// contributions, read an identity copy at the later input instead.
#include <set>

#include "compiler/ops/graph_builder.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {

Status SeparateRepeatedInputsPass(Compilation& compilation) {
  LogicalGraph& graph = compilation.graph;
  GraphBuilder builder(graph, compilation.registry());
  const int op_count = graph.op_count();  // Copies added below read one tensor each.
  for (OpId id = 0; id < op_count; ++id) {
    std::set<TensorId> seen;
    for (size_t index = 0; index < graph.op(id).inputs.size(); ++index) {
      TensorId input = graph.op(id).inputs[index];
      if (seen.insert(input).second) continue;
      const LogicalOp& op = graph.op(id);
      const OpDefinition* definition = compilation.registry().Find(op.type);
      std::string name = op.name + ".copy_" + definition->InputName(static_cast<int>(index));
      SOFTWIRE_ASSIGN_OR_RETURN(TensorId copy,
                                builder.AddSingleOutput(name, "identity", {input}, {}, ""));
      graph.ReplaceInput(id, static_cast<int>(index), copy);
      // Emit the copy right before the op that needs it, not after everything made earlier.
      graph.mutable_op(graph.tensor(copy).producer).sequence = graph.op(id).sequence - 0.5;
    }
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
