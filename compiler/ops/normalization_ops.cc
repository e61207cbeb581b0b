// layer_norm and layer_norm_grad (docs/OPS.md).
#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

// Checks that input `index` is float32[C] with C the last extent of input 0.
Status RequireChannelVector(const InferenceContext& context, int index) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(index, DType::kFloat32));
  int64_t channels = context.input_shape(0).dim(-1);
  if (context.input_shape(index) != Shape({channels})) {
    return InvalidArgumentError(context.InputLabel(index) + " has shape " +
                                context.input_shape(index).ToString() + " but " +
                                context.InputLabel(0) + " " + context.input_shape(0).ToString() +
                                " needs [" + std::to_string(channels) + "]");
  }
  return Status::Ok();
}

Status InferLayerNorm(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 1));
  SOFTWIRE_RETURN_IF_ERROR(RequireChannelVector(context, 1));
  SOFTWIRE_RETURN_IF_ERROR(RequireChannelVector(context, 2));
  if (context.attributes().GetFloat("epsilon") <= 0) {
    return InvalidArgumentError("attribute 'epsilon' must be > 0");
  }
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

// inputs (dy, x, gamma) -> (dx, dgamma, dbeta).
Status InferLayerNormGrad(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 1));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireSameType(1, 0));
  SOFTWIRE_RETURN_IF_ERROR(RequireChannelVector(context, 2));
  context.SetOutput(0, context.input(0));
  context.SetOutput(1, context.input(2));
  context.SetOutput(2, context.input(2));
  return Status::Ok();
}

// One layer_norm_grad computes all three; gradients not wanted stay unread.
Status LayerNormGradient(GradientBuilder& g) {
  SOFTWIRE_ASSIGN_OR_RETURN(
      std::vector<TensorId> gradients,
      g.AddWithOutputs("", "layer_norm_grad", {g.output_gradient(0), g.input(0), g.input(1)},
                       Attributes("epsilon", g.attributes().GetFloat("epsilon")),
                       {"x", "gamma", "beta"}));
  for (int i = 0; i < 3; ++i) {
    if (g.wants(i)) g.SetInputGradient(i, gradients[i]);
  }
  return Status::Ok();
}

// (dy, x, gamma) -> (dx, dgamma, dbeta): rows split leave partial parameter gradients; all
// three outputs are linear in dy.
std::vector<SbpSignature> LayerNormGradSignatures(const OpSignature& op) {
  std::vector<SbpSignature> signatures;
  for (int axis = 0; axis < op.inputs[0].shape.rank() - 1; ++axis) {
    signatures.push_back(Signature({S(axis), S(axis), kB}, {S(axis), kP, kP}));
  }
  signatures.push_back(PartialThrough(3, 0, 3));
  return signatures;
}

}  // namespace

void AddNormalizationOps(OpRegistry& registry) {
  OpDefinition layer_norm;
  layer_norm.type = "layer_norm";
  layer_norm.input_names = {"x", "gamma", "beta"};
  layer_norm.output_names = {"y"};
  layer_norm.attributes = {AttributeWithDefault("epsilon", AttributeValue(1e-5))};
  layer_norm.infer = InferLayerNorm;
  layer_norm.gradient = LayerNormGradient;
  layer_norm.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 8); };
  // Normalizes over the last axis: split any other.
  layer_norm.sbp_signatures = [](const OpSignature& op) {
    return BroadcastingSplitsBelow(op, op.inputs[0].shape.rank() - 1);
  };
  registry.Add(layer_norm);

  OpDefinition layer_norm_grad;
  layer_norm_grad.type = "layer_norm_grad";
  layer_norm_grad.usage = OpUsage::kInternal;
  layer_norm_grad.input_names = {"dy", "x", "gamma"};
  layer_norm_grad.output_names = {"dx", "dgamma", "dbeta"};
  layer_norm_grad.attributes = {AttributeWithDefault("epsilon", AttributeValue(1e-5))};
  layer_norm_grad.infer = InferLayerNormGrad;
  layer_norm_grad.cost = [](const OpSignature& signature) {
    return OpCost{16.0 * static_cast<double>(signature.inputs[0].NumElements()),
                  TouchedBytes(signature)};
  };
  layer_norm_grad.sbp_signatures = LayerNormGradSignatures;
  registry.Add(layer_norm_grad);
}

}  // namespace compiler
}  // namespace softwire
