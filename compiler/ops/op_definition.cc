#include "compiler/ops/op_definition.h"

#include <utility>

namespace softwire {
namespace compiler {

std::string OpDefinition::InputName(int index) const {
  if (variadic_inputs) return input_names.at(0) + std::to_string(index);
  if (index >= 0 && index < static_cast<int>(input_names.size())) return input_names[index];
  return "#" + std::to_string(index);
}

std::string OpDefinition::OutputName(int index) const {
  if (variadic_outputs) return "output" + std::to_string(index);
  if (index >= 0 && index < static_cast<int>(output_names.size())) return output_names[index];
  return "#" + std::to_string(index);
}

AttributeSpec RequiredAttribute(const std::string& name, AttributeKind kind) {
  AttributeSpec spec;
  spec.name = name;
  spec.kind = kind;
  return spec;
}

AttributeSpec AttributeWithDefault(const std::string& name, AttributeValue default_value) {
  AttributeSpec spec;
  spec.name = name;
  spec.kind = KindOf(default_value);
  spec.required = false;
  spec.default_value = std::move(default_value);
  return spec;
}

const AttributeSpec* OpDefinition::FindAttribute(const std::string& name) const {
  for (const AttributeSpec& spec : attributes) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

InferenceContext::InferenceContext(const OpDefinition& definition, std::vector<TensorType> inputs,
                                   const AttributeMap& attributes,
                                   std::vector<TensorType> declared_outputs)
    : definition_(definition),
      inputs_(std::move(inputs)),
      attributes_(attributes),
      declared_outputs_(std::move(declared_outputs)),
      outputs_(declared_outputs_.size()) {}

const TensorType& InferenceContext::input(int index) const {
  CHECK(index >= 0 && index < input_count()) << "input " << index << " of " << definition_.type;
  return inputs_[index];
}

const TensorType& InferenceContext::declared_output(int index) const {
  CHECK(index >= 0 && index < output_count()) << "output " << index << " of " << definition_.type;
  return declared_outputs_[index];
}

void InferenceContext::SetOutput(int index, TensorType type) {
  CHECK(index >= 0 && index < output_count()) << "output " << index << " of " << definition_.type;
  outputs_[index] = std::move(type);
}

std::string InferenceContext::InputLabel(int index) const {
  return "input '" + definition_.InputName(index) + "'";
}

Status InferenceContext::RequireDType(int index, DType dtype) const {
  if (input(index).dtype == dtype) return Status::Ok();
  return InvalidArgumentError(InputLabel(index) + " must be " + DTypeName(dtype) + ", got " +
                              input(index).ToString());
}

Status InferenceContext::RequireFloatingDType(int index) const {
  const DType dtype = input(index).dtype;
  if (dtype == DType::kFloat32 || dtype == DType::kBFloat16) return Status::Ok();
  return InvalidArgumentError(InputLabel(index) + " must be float32 or bfloat16, got " +
                              input(index).ToString());
}

Status InferenceContext::RequireRankAtLeast(int index, int rank) const {
  if (input(index).shape.rank() >= rank) return Status::Ok();
  return InvalidArgumentError(InputLabel(index) + " must have rank >= " + std::to_string(rank) +
                              ", got " + input(index).ToString());
}

Status InferenceContext::RequireRank(int index, int rank) const {
  if (input(index).shape.rank() == rank) return Status::Ok();
  return InvalidArgumentError(InputLabel(index) + " must have rank " + std::to_string(rank) +
                              ", got " + input(index).ToString());
}

Status InferenceContext::RequireSameType(int index, int like_index) const {
  if (input(index) == input(like_index)) return Status::Ok();
  return InvalidArgumentError(InputLabel(index) + " must be " + input(like_index).ToString() +
                              " like " + InputLabel(like_index) + ", got " +
                              input(index).ToString());
}

}  // namespace compiler
}  // namespace softwire
