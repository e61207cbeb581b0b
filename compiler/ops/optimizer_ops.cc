// sgd_update and adam_update (docs/OPS.md): phase-1 consumers of a variable that update it in
// place once per step, with optimizer state kept in the actor.
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

Status RequireNonNegative(const AttributeMap& attributes, const std::string& name) {
  double value = attributes.GetFloat(name);
  if (value >= 0) return Status::Ok();
  return InvalidArgumentError("attribute '" + name + "' must be >= 0, got " +
                              AttributeValueToString(value));
}

// A decay factor: in [0, 1).
Status RequireDecay(const AttributeMap& attributes, const std::string& name) {
  double value = attributes.GetFloat(name);
  if (value >= 0 && value < 1) return Status::Ok();
  return InvalidArgumentError("attribute '" + name + "' must be in [0, 1), got " +
                              AttributeValueToString(value));
}

// (gradient, weight) float32 of one shape; no outputs.
Status CheckUpdateInputs(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(1, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireSameType(0, 1));
  const AttributeMap& attributes = context.attributes();
  SOFTWIRE_RETURN_IF_ERROR(RequireNonNegative(attributes, "learning_rate"));
  SOFTWIRE_RETURN_IF_ERROR(RequireNonNegative(attributes, "weight_decay"));
  SOFTWIRE_RETURN_IF_ERROR(RequireNonNegative(attributes, "gradient_scale"));
  return Status::Ok();
}

Status InferSgdUpdate(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(CheckUpdateInputs(context));
  return RequireDecay(context.attributes(), "momentum");
}

Status InferAdamUpdate(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(CheckUpdateInputs(context));
  SOFTWIRE_RETURN_IF_ERROR(RequireDecay(context.attributes(), "beta1"));
  SOFTWIRE_RETURN_IF_ERROR(RequireDecay(context.attributes(), "beta2"));
  double epsilon = context.attributes().GetFloat("epsilon");
  if (epsilon <= 0) return InvalidArgumentError("attribute 'epsilon' must be > 0");
  return Status::Ok();
}

OpDefinition Update(const std::string& type, int64_t state_floats_per_element,
                    double flops_per_element) {
  OpDefinition definition;
  definition.type = type;
  definition.usage = OpUsage::kActorKind;
  definition.input_names = {"gradient", "weight"};
  definition.actor_kind = proto::ACTOR_KIND_UPDATE;
  definition.period_rule = PeriodRule::kPerStep;
  definition.in_place_input = 1;
  definition.state_bytes = [state_floats_per_element](const OpSignature& signature) {
    return state_floats_per_element * 4 * signature.inputs[1].NumElements();
  };
  // The gradient lies like the weight it updates (the compiler forces the variable's sbp).
  definition.sbp_signatures = [](const OpSignature& op) {
    std::vector<SbpSignature> signatures;
    for (int axis = 0; axis < op.inputs[1].shape.rank(); ++axis) {
      signatures.push_back(Signature({S(axis), S(axis)}, {}));
    }
    return signatures;
  };
  definition.cost = [state_floats_per_element, flops_per_element](const OpSignature& signature) {
    double elements = static_cast<double>(signature.inputs[1].NumElements());
    // Reads gradient, weight and state; writes weight and state; and, with a third input (the
    // variable's bfloat16 copy, fold_weight_casts), writes the copy.
    double bytes = 4.0 * elements * (3.0 + 2.0 * static_cast<double>(state_floats_per_element));
    if (signature.inputs.size() > 2) bytes += 2.0 * elements;
    return OpCost{flops_per_element * elements, bytes};
  };
  return definition;
}

}  // namespace

void AddOptimizerOps(OpRegistry& registry) {
  OpDefinition sgd = Update("sgd_update", 1, 5);
  sgd.attributes = {RequiredAttribute("learning_rate", AttributeKind::kFloat),
                    AttributeWithDefault("momentum", AttributeValue(0.0)),
                    AttributeWithDefault("weight_decay", AttributeValue(0.0)),
                    AttributeWithDefault("gradient_scale", AttributeValue(1.0))};
  sgd.infer = InferSgdUpdate;
  registry.Add(sgd);

  OpDefinition adam = Update("adam_update", 2, 14);
  adam.attributes = {RequiredAttribute("learning_rate", AttributeKind::kFloat),
                     AttributeWithDefault("beta1", AttributeValue(0.9)),
                     AttributeWithDefault("beta2", AttributeValue(0.999)),
                     AttributeWithDefault("epsilon", AttributeValue(1e-8)),
                     AttributeWithDefault("weight_decay", AttributeValue(0.0)),
                     AttributeWithDefault("gradient_scale", AttributeValue(1.0))};
  adam.infer = InferAdamUpdate;
  registry.Add(adam);
}

}  // namespace compiler
}  // namespace softwire
