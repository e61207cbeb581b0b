// batch_norm and batch_norm_grad (docs/OPS.md): training-mode batch normalisation of x
// [N, C, ...] over every axis but the channels (axis 1), with batch statistics; with the
// optional running_mean and running_var (frozen variables) the compiler keeps them up to date
// (batch_norm_statistics_pass.cc: batch_norm_statistics and running_average_update ops) and
// forward-only jobs normalise with them (`use_running_statistics`).
//
// Under data parallelism each device normalises over its own part of the batch, as PyTorch's
// DistributedDataParallel does without SyncBatchNorm: the batch split signature is not the
// logical op over the whole batch but the per-device one (docs/OPS.md, "batch_norm"). Likewise
// each micro-batch is normalised over itself.
//
// x (dy and x for the gradient) may be bfloat16 (docs/PRECISION.md, activations between
// convolutions): y and dx then are bfloat16 too; gamma, beta, the statistics and dgamma, dbeta
// stay float32, as under PyTorch's autocast.
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
  SOFTWIRE_RETURN_IF_ERROR(context.RequireFloatingDType(0));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 2));
  if (context.input_count() == 4) {
    return InvalidArgumentError(
        "input 'running_var' is missing: give both running_mean and "
        "running_var, or neither");
  }
  for (int index = 1; index < context.input_count(); ++index) {
    SOFTWIRE_RETURN_IF_ERROR(RequireChannelVector(context, 0, index));
  }
  SOFTWIRE_RETURN_IF_ERROR(RequireEpsilon(context));
  const double momentum = context.attributes().GetFloat("momentum");
  if (momentum < 0 || momentum > 1) {
    return InvalidArgumentError("attribute 'momentum' must be in [0, 1], got " +
                                AttributeValueToString(momentum));
  }
  if (context.attributes().GetBool("use_running_statistics") && context.input_count() != 5) {
    return InvalidArgumentError(
        "attribute 'use_running_statistics' needs inputs 'running_mean' and 'running_var'");
  }
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

// (dy, x, gamma) -> (dx, dgamma, dbeta).
Status InferBatchNormGrad(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireFloatingDType(0));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 2));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireSameType(1, 0));
  SOFTWIRE_RETURN_IF_ERROR(RequireChannelVector(context, 1, 2));
  context.SetOutput(0, context.input(0));
  context.SetOutput(1, context.input(2));
  context.SetOutput(2, context.input(2));
  return Status::Ok();
}

Status BatchNormGradient(GradientBuilder& g) {
  if (g.attributes().GetBool("use_running_statistics")) {
    return InvalidArgumentError(
        "batch_norm with use_running_statistics has no gradient (it is for evaluation)");
  }
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

// Channels split: exact. Batch split: per-device statistics (see above), or the running ones.
std::vector<SbpSignature> BatchNormSignatures(const OpSignature& op) {
  const size_t per_channel = op.inputs.size() - 1;
  std::vector<placement::Sbp> batch = {S(0)}, channels = {S(1)};
  batch.insert(batch.end(), per_channel, kB);
  channels.insert(channels.end(), per_channel, S(0));
  return {Signature(batch, {S(0)}), Signature(channels, {S(1)})};
}

// x [N, C, ...] -> (mean, var) [C]: the batch's, var unbiased (divide by count - 1) as
// PyTorch's running_var takes it.
Status InferBatchNormStatistics(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireFloatingDType(0));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 2));
  const TensorType channels = Float32(Shape({context.input_shape(0).dim(1)}));
  context.SetOutput(0, channels);
  context.SetOutput(1, channels);
  return Status::Ok();
}

// (statistic, running): running = (1 - momentum) running + momentum * scale * statistic, once
// per step, in place.
Status InferRunningAverageUpdate(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(1, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireSameType(0, 1));
  return Status::Ok();
}

std::vector<SbpSignature> BatchNormGradSignatures(const OpSignature&) {
  return {Signature({S(0), S(0), kB}, {S(0), kP, kP}),
          Signature({S(1), S(1), S(0)}, {S(1), S(0), S(0)})};
}

}  // namespace

void AddBatchNormOps(OpRegistry& registry) {
  OpDefinition batch_norm;
  batch_norm.type = "batch_norm";
  batch_norm.input_names = {"x", "gamma", "beta", "running_mean", "running_var"};
  batch_norm.optional_inputs = 2;
  batch_norm.output_names = {"y"};
  batch_norm.attributes = {AttributeWithDefault("epsilon", AttributeValue(1e-5)),
                           AttributeWithDefault("momentum", AttributeValue(0.1)),
                           AttributeWithDefault("use_running_statistics", AttributeValue(false))};
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

  OpDefinition statistics;
  statistics.type = "batch_norm_statistics";
  statistics.usage = OpUsage::kInternal;
  statistics.input_names = {"x"};
  statistics.output_names = {"mean", "var"};
  statistics.infer = InferBatchNormStatistics;
  statistics.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 4); };
  // Channels only: the batch's statistics need the whole batch (a batch split is gathered).
  statistics.sbp_signatures = [](const OpSignature&) {
    return std::vector<SbpSignature>{Signature({S(1)}, {S(0), S(0)})};
  };
  registry.Add(statistics);

  OpDefinition update;
  update.type = "running_average_update";
  update.usage = OpUsage::kActorKind;
  update.input_names = {"statistic", "running"};
  update.attributes = {RequiredAttribute("momentum", AttributeKind::kFloat),
                       AttributeWithDefault("scale", AttributeValue(1.0))};
  update.infer = InferRunningAverageUpdate;
  update.actor_kind = proto::ACTOR_KIND_UPDATE;
  update.period_rule = PeriodRule::kPerStep;
  update.in_place_input = 1;
  update.sbp_signatures = [](const OpSignature&) {
    return std::vector<SbpSignature>{Signature({S(0), S(0)}, {})};
  };
  update.cost = [](const OpSignature& signature) {
    return OpCost{3.0 * static_cast<double>(signature.inputs[1].NumElements()),
                  TouchedBytes(signature)};
  };
  registry.Add(update);
}

}  // namespace compiler
}  // namespace softwire
