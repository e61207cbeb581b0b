// batch_norm and batch_norm_grad (docs/OPS.md): training-mode batch normalisation of x
// [N, C, ...] over every axis but the channels (axis 1), with batch statistics.
//
// Under data parallelism each device normalises over its own part of the batch, as PyTorch's
// DistributedDataParallel does without SyncBatchNorm: the batch split signature is not the
// logical op over the whole batch but the per-device one (docs/OPS.md, "batch_norm"). Likewise
// each micro-batch is normalised over itself.
#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

// Checks that input `index` is float32[C] with C the extent of axis 1 of x.
Status RequireChannelVector(const InferenceContext& context, int x_index, int index) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(index, DType::kFloat32));
  const Shape channels({context.input_shape(x_index).dim(1)});
  if (context.input_shape(index) != channels) {
    return InvalidArgumentError(
        context.InputLabel(index) + " has shape " + context.input_shape(index).ToString() +
        " but " + context.InputLabel(x_index) + " " + context.input_shape(x_index).ToString() +
        " needs " + channels.ToString());
  }
  return Status::Ok();
}

Status RequireEpsilon(const InferenceContext& context) {
  if (context.attributes().GetFloat("epsilon") <= 0) {
    return InvalidArgumentError("attribute 'epsilon' must be > 0");
  }
  return Status::Ok();
}

Status InferBatchNorm(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 2));
  SOFTWIRE_RETURN_IF_ERROR(RequireChannelVector(context, 0, 1));
  SOFTWIRE_RETURN_IF_ERROR(RequireChannelVector(context, 0, 2));
  SOFTWIRE_RETURN_IF_ERROR(RequireEpsilon(context));
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

// (dy, x, gamma) -> (dx, dgamma, dbeta).
Status InferBatchNormGrad(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 2));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireSameType(1, 0));
  SOFTWIRE_RETURN_IF_ERROR(RequireChannelVector(context, 1, 2));
  context.SetOutput(0, context.input(0));
  context.SetOutput(1, context.input(2));
  context.SetOutput(2, context.input(2));
  return Status::Ok();
}

Status BatchNormGradient(GradientBuilder& g) {
  SOFTWIRE_ASSIGN_OR_RETURN(
      std::vector<TensorId> gradients,
      g.AddWithOutputs("", "batch_norm_grad", {g.output_gradient(0), g.input(0), g.input(1)},
                       Attributes("epsilon", g.attributes().GetFloat("epsilon")),
                       {"x", "gamma", "beta"}));
  for (int i = 0; i < 3; ++i) {
    if (g.wants(i)) g.SetInputGradient(i, gradients[i]);
  }
  return Status::Ok();
}

// Channels split: exact. Batch split: per-device statistics (see above).
std::vector<SbpSignature> BatchNormSignatures(const OpSignature&) {
  return {Signature({S(0), kB, kB}, {S(0)}), Signature({S(1), S(0), S(0)}, {S(1)})};
}

std::vector<SbpSignature> BatchNormGradSignatures(const OpSignature&) {
  return {Signature({S(0), S(0), kB}, {S(0), kP, kP}),
          Signature({S(1), S(1), S(0)}, {S(1), S(0), S(0)})};
}

}  // namespace

void AddBatchNormOps(OpRegistry& registry) {
  OpDefinition batch_norm;
  batch_norm.type = "batch_norm";
  batch_norm.input_names = {"x", "gamma", "beta"};
  batch_norm.output_names = {"y"};
  batch_norm.attributes = {AttributeWithDefault("epsilon", AttributeValue(1e-5))};
  batch_norm.infer = InferBatchNorm;
  batch_norm.gradient = BatchNormGradient;
  batch_norm.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 8); };
  batch_norm.sbp_signatures = BatchNormSignatures;
  registry.Add(batch_norm);

  OpDefinition batch_norm_grad;
  batch_norm_grad.type = "batch_norm_grad";
  batch_norm_grad.usage = OpUsage::kInternal;
  batch_norm_grad.input_names = {"dy", "x", "gamma"};
  batch_norm_grad.output_names = {"dx", "dgamma", "dbeta"};
  batch_norm_grad.attributes = {AttributeWithDefault("epsilon", AttributeValue(1e-5))};
  batch_norm_grad.infer = InferBatchNormGrad;
  batch_norm_grad.cost = [](const OpSignature& signature) {
    return OpCost{16.0 * static_cast<double>(signature.inputs[0].NumElements()),
                  TouchedBytes(signature)};
  };
  batch_norm_grad.sbp_signatures = BatchNormGradSignatures;
  registry.Add(batch_norm_grad);
}

}  // namespace compiler
}  // namespace softwire
