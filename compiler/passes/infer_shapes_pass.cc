// infer_shapes: the type of every tensor, op by op in topological order.
#include <limits>
#include <string>

#include "compiler/ops/graph_builder.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {

namespace {

// The job fields that make an op's output as large as it is.
std::string SizeFields(const LogicalOp& op) {
  if (op.type == "variable") return "variable '" + op.name + "': dims";
  if (op.type == "source") return "source '" + op.name + "': micro_batch_size x sample_dims";
  return "its inputs' shapes and attributes";
}

// Every output within kMaxTensorBytes, before any later op or pass multiplies its extents.
Status CheckOutputSizes(const Compilation& compilation, OpId id) {
  const LogicalOp& op = compilation.graph.op(id);
  for (TensorId output : op.outputs) {
    const LogicalTensor& tensor = compilation.graph.tensor(output);
    const int64_t bytes = tensor.type.NumBytes();
    if (bytes >= 0 && bytes <= kMaxTensorBytes) continue;
    const std::string size = bytes == std::numeric_limits<int64_t>::max()
                                 ? "more than 2^63 bytes"
                                 : std::to_string(bytes) + " bytes";
    return compilation.OpError(id, "output '" + tensor.name + "' " + tensor.type.ToString() +
                                       " holds " + size + "; one tensor may hold at most " +
                                       std::to_string(kMaxTensorBytes) + " (1 TiB), see " +
                                       SizeFields(op));
  }
  return Status::Ok();
}

}  // namespace

Status InferShapesPass(Compilation& compilation) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<OpId> order, compilation.graph.TopologicalOrder());
  for (OpId op : order) {
    Status inferred = InferOpOutputs(compilation.registry(), compilation.graph, op);
    if (!inferred.ok()) return compilation.OpError(op, inferred.message());
    SOFTWIRE_RETURN_IF_ERROR(CheckOutputSizes(compilation, op));
  }
  compilation.types_inferred = true;
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
