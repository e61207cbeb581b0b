#include "compiler/ops/graph_builder.h"

#include <utility>

#include "compiler/ops/attribute_schema.h"

namespace softwire {
namespace compiler {

Status InferOpOutputs(const OpRegistry& registry, LogicalGraph& graph, OpId op_id) {
  const LogicalOp& op = graph.op(op_id);
  const OpDefinition* definition = registry.Find(op.type);
  CHECK(definition != nullptr) << "op '" << op.name << "' has unknown type " << op.type;
  std::vector<TensorType> inputs;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const LogicalTensor& input = graph.tensor(op.inputs[i]);
    if (!input.type.known()) {
      return InvalidArgumentError("input '" + definition->InputName(static_cast<int>(i)) + "' ('" +
                                  input.name + "') has no known type");
    }
    inputs.push_back(input.type);
  }
  std::vector<TensorType> declared;
  for (TensorId output : op.outputs) declared.push_back(graph.tensor(output).type);

  InferenceContext context(*definition, std::move(inputs), op.attributes, std::move(declared));
  SOFTWIRE_RETURN_IF_ERROR(definition->infer(context));
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const TensorType& type = context.outputs()[i];
    CHECK(type.known()) << "inference of '" << op.type << "' left output " << i << " unset";
    graph.mutable_tensor(op.outputs[i]).type = type;
  }
  return Status::Ok();
}

std::optional<OpId> GraphBuilder::FindIdenticalComputeOp(const OpDefinition& definition,
                                                         const OpRequest& request,
                                                         const AttributeMap& attributes) const {
  if (definition.actor_kind != proto::ACTOR_KIND_COMPUTE || request.inputs.empty()) {
    return std::nullopt;
  }
  for (const TensorUse& use : graph_.tensor(request.inputs[0]).consumers) {
    const LogicalOp& op = graph_.op(use.op);
    if (use.input_index == 0 && op.type == request.type && op.inputs == request.inputs &&
        op.outputs.size() == request.output_names.size() &&
        op.attributes.entries() == attributes.entries()) {
      return op.id;
    }
  }
  return std::nullopt;
}

StatusOr<OpId> GraphBuilder::Add(const OpRequest& request) {
  auto fail = [&request](const Status& status) {
    return InternalError("compiler-made op '" + request.name + "' (" + request.type +
                         "): " + status.message());
  };
  StatusOr<const OpDefinition*> definition = registry_.Lookup(request.type);
  if (!definition.ok()) return fail(definition.status());
  StatusOr<AttributeMap> attributes = CompleteAttributes(**definition, request.attributes);
  if (!attributes.ok()) return fail(attributes.status());
  std::optional<OpId> identical = FindIdenticalComputeOp(**definition, request, *attributes);
  if (identical.has_value()) return *identical;

  NewOp op;
  op.name = graph_.UniqueOpName(request.name);
  op.type = request.type;
  op.inputs = request.inputs;
  op.attributes = std::move(attributes).value();
  op.gradient_of = request.gradient_of;
  for (const std::string& output_name : request.output_names) {
    StatusOr<TensorId> output = graph_.AddTensor(graph_.UniqueTensorName(output_name));
    if (!output.ok()) return fail(output.status());
    op.outputs.push_back(*output);
  }
  StatusOr<OpId> id = graph_.AddOp(std::move(op));
  if (!id.ok()) return fail(id.status());
  Status inferred = InferOpOutputs(registry_, graph_, *id);
  if (!inferred.ok()) return fail(inferred);
  return id;
}

StatusOr<TensorId> GraphBuilder::AddSingleOutput(const std::string& name, const std::string& type,
                                                 std::vector<TensorId> inputs,
                                                 AttributeMap attributes,
                                                 const std::string& gradient_of) {
  OpRequest request;
  request.name = name;
  request.type = type;
  request.inputs = std::move(inputs);
  request.output_names = {name};
  request.attributes = std::move(attributes);
  request.gradient_of = gradient_of;
  SOFTWIRE_ASSIGN_OR_RETURN(OpId id, Add(request));
  return graph_.op(id).outputs.at(0);
}

}  // namespace compiler
}  // namespace softwire
