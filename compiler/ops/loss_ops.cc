// softmax_cross_entropy (+ its gradient) and accuracy (docs/OPS.md).
#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

// logits [..., V] float32 and labels [...] int32 (at inputs `logits` and `labels`).
Status CheckLogitsAndLabels(const InferenceContext& context, int logits, int labels) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(logits, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(logits, 1));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(labels, DType::kInt32));
  const Shape& logits_shape = context.input_shape(logits);
  Shape rows(std::vector<int64_t>(logits_shape.dims().begin(), logits_shape.dims().end() - 1));
  if (context.input_shape(labels) != rows) {
    return InvalidArgumentError(context.InputLabel(labels) + " has shape " +
                                context.input_shape(labels).ToString() + " but " +
                                context.InputLabel(logits) + " " + logits_shape.ToString() +
                                " needs " + rows.ToString());
  }
  return Status::Ok();
}

Status InferSoftmaxCrossEntropy(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(CheckLogitsAndLabels(context, 0, 1));
  context.SetOutput(0, Float32(context.input_shape(1)));
  return Status::Ok();
}

Status SoftmaxCrossEntropyGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dlogits,
                            g.Add("logits", "softmax_cross_entropy_grad",
                                  {g.output_gradient(0), g.input(0), g.input(1)}));
  g.SetInputGradient(0, dlogits);
  return Status::Ok();
}

// (dloss [...], logits [..., V], labels [...]) -> dlogits [..., V].
Status InferSoftmaxCrossEntropyGrad(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(CheckLogitsAndLabels(context, 1, 2));
  if (context.input_shape(0) != context.input_shape(2)) {
    return InvalidArgumentError("input 'dloss' " + context.input(0).ToString() +
                                " must have the shape of input 'labels' " +
                                context.input_shape(2).ToString());
  }
  context.SetOutput(0, context.input(1));
  return Status::Ok();
}

Status InferAccuracy(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(CheckLogitsAndLabels(context, 0, 1));
  context.SetOutput(0, Float32(Shape()));
  return Status::Ok();
}

OpCost LogitsCost(const OpSignature& signature, int logits, double flops_per_logit) {
  return OpCost{flops_per_logit * static_cast<double>(signature.inputs[logits].NumElements()),
                TouchedBytes(signature)};
}

// Rows (the leading axes of logits) are independent: split them, with labels alike.
std::vector<SbpSignature> CrossEntropySignatures(const OpSignature& op) {
  std::vector<SbpSignature> signatures;
  for (int axis = 0; axis < op.inputs[0].shape.rank() - 1; ++axis) {
    signatures.push_back(Signature({S(axis), S(axis)}, {S(axis)}));
  }
  return signatures;
}

// (dloss, logits, labels): rows split alike; linear in dloss.
std::vector<SbpSignature> CrossEntropyGradSignatures(const OpSignature& op) {
  std::vector<SbpSignature> signatures;
  for (int axis = 0; axis < op.inputs[1].shape.rank() - 1; ++axis) {
    signatures.push_back(Signature({S(axis), S(axis), S(axis)}, {S(axis)}));
  }
  signatures.push_back(PartialThrough(3, 0, 1));
  return signatures;
}

// Split rows count their hits over the logical row count: partial fractions.
std::vector<SbpSignature> AccuracySignatures(const OpSignature& op) {
  std::vector<SbpSignature> signatures;
  for (int axis = 0; axis < op.inputs[0].shape.rank() - 1; ++axis) {
    signatures.push_back(Signature({S(axis), S(axis)}, {kP}));
  }
  return signatures;
}

// docs/OPS.md "Physical attributes": y = correct rows / divisor (the logical row count).
void LocalizeAccuracy(PhysicalContext& context) {
  const int64_t logical_rows = context.logical_inputs[1].NumElements();
  if (context.local_inputs[1].NumElements() != logical_rows) {
    context.attributes.Set("divisor", logical_rows);
  }
}

}  // namespace

void AddLossOps(OpRegistry& registry) {
  OpDefinition cross_entropy;
  cross_entropy.type = "softmax_cross_entropy";
  cross_entropy.input_names = {"logits", "labels"};
  cross_entropy.output_names = {"loss"};
  cross_entropy.infer = InferSoftmaxCrossEntropy;
  cross_entropy.gradient = SoftmaxCrossEntropyGradient;
  cross_entropy.cost = [](const OpSignature& signature) { return LogitsCost(signature, 0, 12); };
  cross_entropy.sbp_signatures = CrossEntropySignatures;
  registry.Add(cross_entropy);

  OpDefinition cross_entropy_grad;
  cross_entropy_grad.type = "softmax_cross_entropy_grad";
  cross_entropy_grad.usage = OpUsage::kInternal;
  cross_entropy_grad.input_names = {"dloss", "logits", "labels"};
  cross_entropy_grad.output_names = {"dlogits"};
  cross_entropy_grad.infer = InferSoftmaxCrossEntropyGrad;
  cross_entropy_grad.cost = [](const OpSignature& signature) {
    return LogitsCost(signature, 1, 14);
  };
  cross_entropy_grad.sbp_signatures = CrossEntropyGradSignatures;
  registry.Add(cross_entropy_grad);

  OpDefinition accuracy;
  accuracy.type = "accuracy";
  accuracy.input_names = {"logits", "labels"};
  accuracy.output_names = {"y"};
  accuracy.infer = InferAccuracy;
  accuracy.cost = [](const OpSignature& signature) { return LogitsCost(signature, 0, 1); };
  accuracy.sbp_signatures = AccuracySignatures;
  accuracy.localize = LocalizeAccuracy;
  registry.Add(accuracy);
}

}  // namespace compiler
}  // namespace softwire
