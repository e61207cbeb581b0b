// Adding ops to a LogicalGraph with their types inferred, and inferring the types of ops that
// are already there.
//
// Passes that create ops (autodiff, gradient accumulation, optimizer, sinks) go through
// GraphBuilder, so every op in the graph has complete attributes and known output types the
// moment it exists. Compiler-made ops that fail these checks are compiler bugs: Internal.
//
// Compute ops are pure, so a request for a compute op identical to one already in the graph
// (same type, inputs and attributes) returns that op instead of adding a copy: the q, k and v
// weight gradients of one attention block share one flattened input, for example.
//
//   GraphBuilder builder(compilation.graph, compilation.registry);
//   SOFTWIRE_ASSIGN_OR_RETURN(TensorId sum, builder.AddSingleOutput(
//       "w1.grad", "add_n", {first, second}, {}, /*gradient_of=*/""));
#ifndef SOFTWIRE_COMPILER_OPS_GRAPH_BUILDER_H_
#define SOFTWIRE_COMPILER_OPS_GRAPH_BUILDER_H_

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/logical_graph.h"
#include "compiler/ops/op_registry.h"

namespace softwire {
namespace compiler {

// Runs `op`'s inference and stores its output types. Fails with the definition's
// InvalidArgument, unprefixed (callers add the op's name and line), or when an input's type
// is unknown.
Status InferOpOutputs(const OpRegistry& registry, LogicalGraph& graph, OpId op);

struct OpRequest {
  std::string name;  // Made unique if taken.
  std::string type;
  std::vector<TensorId> inputs;
  std::vector<std::string> output_names;  // Made unique if taken.
  AttributeMap attributes;                // Completed with defaults.
  std::string gradient_of;
};

// Borrows the graph and registry; both must outlive it. Not thread-safe.
class GraphBuilder {
 public:
  GraphBuilder(LogicalGraph& graph, const OpRegistry& registry)
      : graph_(graph), registry_(registry) {}

  // The new op, or an identical compute op already in the graph. Internal, naming the op,
  // for an unknown type, bad attributes or failed inference.
  StatusOr<OpId> Add(const OpRequest& request);

  // An op with one output tensor named like the op; returns that tensor.
  StatusOr<TensorId> AddSingleOutput(const std::string& name, const std::string& type,
                                     std::vector<TensorId> inputs, AttributeMap attributes,
                                     const std::string& gradient_of);

  LogicalGraph& graph() { return graph_; }
  const OpRegistry& registry() const { return registry_; }

 private:
  std::optional<OpId> FindIdenticalComputeOp(const OpDefinition& definition,
                                             const OpRequest& request,
                                             const AttributeMap& attributes) const;

  LogicalGraph& graph_;
  const OpRegistry& registry_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_OPS_GRAPH_BUILDER_H_
