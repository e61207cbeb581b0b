// softmax (optionally causal) and softmax_grad (docs/OPS.md).
#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

Status InferSoftmax(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 1));
  if (context.attributes().GetBool("causal")) {
    const Shape& x = context.input_shape(0);
    if (x.rank() < 2 || x.dim(-1) != x.dim(-2)) {
      return InvalidArgumentError(
          "attribute 'causal' needs input 'x' to end in two equal axes "
          "[T, T], got " +
          x.ToString());
    }
  }
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status SoftmaxGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dx,
                            g.Add("x", "softmax_grad", {g.output_gradient(0), g.output(0)}));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

Status InferSoftmaxGrad(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 1));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireSameType(1, 0));
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

// Rows are independent: split any axis but the normalized last one; with `causal` also not the
// row axis, whose index the mask reads.
std::vector<SbpSignature> SoftmaxSignatures(const OpSignature& op) {
  const int rank = op.inputs[0].shape.rank();
  const bool causal = op.attributes.GetBool("causal");
  return BroadcastingSplitsBelow(op, causal ? rank - 2 : rank - 1);
}

// Rows are independent (masked entries have y = 0), and dx is linear in dy.
std::vector<SbpSignature> SoftmaxGradSignatures(const OpSignature& op) {
  std::vector<SbpSignature> signatures = BroadcastingSplitsBelow(op, op.inputs[0].shape.rank() - 1);
  signatures.push_back(PartialThrough(2, 0, 1));
  return signatures;
}

}  // namespace

void AddSoftmaxOps(OpRegistry& registry) {
  OpDefinition softmax;
  softmax.type = "softmax";
  softmax.input_names = {"x"};
  softmax.output_names = {"y"};
  softmax.attributes = {AttributeWithDefault("causal", AttributeValue(false))};
  softmax.infer = InferSoftmax;
  softmax.gradient = SoftmaxGradient;
  // max, subtract, exp (~10), sum, divide.
  softmax.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 14); };
  softmax.sbp_signatures = SoftmaxSignatures;
  registry.Add(softmax);

  OpDefinition softmax_grad;
  softmax_grad.type = "softmax_grad";
  softmax_grad.usage = OpUsage::kInternal;
  softmax_grad.input_names = {"dy", "y"};
  softmax_grad.output_names = {"dx"};
  softmax_grad.infer = InferSoftmaxGrad;
  softmax_grad.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 4); };
  softmax_grad.sbp_signatures = SoftmaxGradSignatures;
  registry.Add(softmax_grad);
}

}  // namespace compiler
}  // namespace softwire
