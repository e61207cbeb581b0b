#include "compiler/ops/gradient_builder.h"

#include <utility>

namespace softwire {
namespace compiler {

GradientBuilder::GradientBuilder(GraphBuilder& builder, OpId forward_op,
                                 std::vector<std::optional<TensorId>> output_gradients,
                                 std::vector<bool> wanted_inputs)
    : builder_(builder),
      forward_op_(forward_op),
      output_gradients_(std::move(output_gradients)),
      wanted_inputs_(std::move(wanted_inputs)),
      input_gradients_(wanted_inputs_.size()) {
  CHECK_EQ(output_gradients_.size(), forward().outputs.size());
  CHECK_EQ(wanted_inputs_.size(), forward().inputs.size());
}

TensorId GradientBuilder::output_gradient(int index) const {
  CHECK(has_output_gradient(index))
      << "op '" << forward().name << "' output " << index << " has no gradient";
  return *output_gradients_[index];
}

std::string GradientBuilder::NameFor(const std::string& suffix) const {
  if (suffix.empty()) return forward().name + ".grad";
  return forward().name + ".grad_" + suffix;
}

StatusOr<TensorId> GradientBuilder::Add(const std::string& suffix, const std::string& type,
                                        std::vector<TensorId> inputs, AttributeMap attributes) {
  return builder_.AddSingleOutput(NameFor(suffix), type, std::move(inputs), std::move(attributes),
                                  forward().name);
}

StatusOr<std::vector<TensorId>> GradientBuilder::AddWithOutputs(
    const std::string& suffix, const std::string& type, std::vector<TensorId> inputs,
    AttributeMap attributes, const std::vector<std::string>& output_suffixes) {
  OpRequest request;
  request.name = NameFor(suffix);
  request.type = type;
  request.inputs = std::move(inputs);
  for (const std::string& output_suffix : output_suffixes) {
    request.output_names.push_back(NameFor(output_suffix));
  }
  request.attributes = std::move(attributes);
  request.gradient_of = forward().name;
  SOFTWIRE_ASSIGN_OR_RETURN(OpId id, builder_.Add(request));
  return builder_.graph().op(id).outputs;
}

StatusOr<TensorId> GradientBuilder::SumToShape(const std::string& suffix, TensorId value,
                                               const Shape& shape) {
  if (this->shape(value) == shape) return value;
  AttributeMap attributes;
  attributes.Set("shape", shape.dims());
  return Add(suffix, "sum_to_shape", {value}, std::move(attributes));
}

void GradientBuilder::SetInputGradient(int input_index, TensorId gradient) {
  CHECK(wants(input_index)) << "op '" << forward().name << "': gradient of input " << input_index
                            << " is not wanted";
  CHECK(!input_gradients_.at(input_index).has_value())
      << "op '" << forward().name << "': gradient of input " << input_index << " set twice";
  input_gradients_[input_index] = gradient;
}

}  // namespace compiler
}  // namespace softwire
