// add, sub, mul, scale, bias_add (+ bias_add_grad) and identity (docs/OPS.md).
#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

Status InferBroadcastBinary(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(1, DType::kFloat32));
  SOFTWIRE_ASSIGN_OR_RETURN(Shape shape, BroadcastInputs(context, 0, 1));
  context.SetOutput(0, Float32(std::move(shape)));
  return Status::Ok();
}

// add also takes two bfloat16 operands of one shape (no broadcasting): the residual sums of
// activations kept in bf16 between convolutions (docs/PRECISION.md).
Status InferAdd(InferenceContext& context) {
  if (context.input(0).dtype != DType::kBFloat16) return InferBroadcastBinary(context);
  SOFTWIRE_RETURN_IF_ERROR(context.RequireSameType(1, 0));
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status InferSameAsFloatInput(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status AddGradient(GradientBuilder& g) {
  TensorId dc = g.output_gradient(0);
  for (int i = 0; i < 2; ++i) {
    if (!g.wants(i)) continue;
    std::string suffix = i == 0 ? "a" : "b";
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId gradient, g.SumToShape(suffix, dc, g.shape(g.input(i))));
    g.SetInputGradient(i, gradient);
  }
  return Status::Ok();
}

Status SubGradient(GradientBuilder& g) {
  TensorId dc = g.output_gradient(0);
  if (g.wants(0)) {
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId da, g.SumToShape("a", dc, g.shape(g.input(0))));
    g.SetInputGradient(0, da);
  }
  if (g.wants(1)) {
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId negated,
                              g.Add("b.negate", "scale", {dc}, Attributes("factor", -1.0)));
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId db, g.SumToShape("b", negated, g.shape(g.input(1))));
    g.SetInputGradient(1, db);
  }
  return Status::Ok();
}

Status MulGradient(GradientBuilder& g) {
  TensorId dc = g.output_gradient(0);
  for (int i = 0; i < 2; ++i) {
    if (!g.wants(i)) continue;
    std::string suffix = i == 0 ? "a" : "b";
    TensorId other = g.input(1 - i);
    TensorId input = g.input(i);
    bool needs_sum = g.shape(dc) != g.shape(input);
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId product,
                              g.Add(needs_sum ? suffix + ".product" : suffix, "mul", {dc, other}));
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId gradient, g.SumToShape(suffix, product, g.shape(input)));
    g.SetInputGradient(i, gradient);
  }
  return Status::Ok();
}

Status ScaleGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dx,
                            g.Add("x", "scale", {g.output_gradient(0)},
                                  Attributes("factor", g.attributes().GetFloat("factor"))));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

Status InferBiasAdd(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(1, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 1));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRank(1, 1));
  if (context.input_shape(1).dim(0) != context.input_shape(0).dim(-1)) {
    return InvalidArgumentError("input 'bias' has shape " + context.input_shape(1).ToString() +
                                " but input 'x' " + context.input_shape(0).ToString() +
                                " has C = " + std::to_string(context.input_shape(0).dim(-1)));
  }
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status BiasAddGradient(GradientBuilder& g) {
  TensorId dy = g.output_gradient(0);
  if (g.wants(0)) g.SetInputGradient(0, dy);
  if (g.wants(1)) {
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId dbias, g.Add("bias", "bias_add_grad", {dy}));
    g.SetInputGradient(1, dbias);
  }
  return Status::Ok();
}

Status InferBiasAddGrad(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 1));
  context.SetOutput(0, Float32(Shape({context.input_shape(0).dim(-1)})));
  return Status::Ok();
}

Status InferIdentity(InferenceContext& context) {
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status IdentityGradient(GradientBuilder& g) {
  if (g.wants(0)) g.SetInputGradient(0, g.output_gradient(0));
  return Status::Ok();
}

// Splits that follow broadcasting, plus the partial signatures `partials` adds.
std::function<std::vector<SbpSignature>(const OpSignature&)> SplitsAnd(
    std::vector<SbpSignature> partials) {
  return [partials](const OpSignature& op) {
    std::vector<SbpSignature> signatures = BroadcastingSplits(op);
    signatures.insert(signatures.end(), partials.begin(), partials.end());
    return signatures;
  };
}

// dy [..., C] -> [C]: a split leading axis leaves partial sums; a split C stays split.
std::vector<SbpSignature> BiasAddGradSignatures(const OpSignature& op) {
  const int rank = op.inputs[0].shape.rank();
  std::vector<SbpSignature> signatures;
  for (int axis = 0; axis < rank - 1; ++axis) signatures.push_back(Signature({S(axis)}, {kP}));
  signatures.push_back(Signature({S(rank - 1)}, {S(0)}));
  signatures.push_back(AllPartial(1, 1));
  return signatures;
}

OpDefinition Binary(const std::string& type, std::function<Status(GradientBuilder&)> gradient) {
  OpDefinition definition;
  definition.type = type;
  definition.input_names = {"a", "b"};
  definition.output_names = {"c"};
  definition.infer = InferBroadcastBinary;
  definition.gradient = std::move(gradient);
  definition.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 1); };
  return definition;
}

}  // namespace

void AddElementwiseOps(OpRegistry& registry) {
  OpDefinition add = Binary("add", AddGradient);
  add.infer = InferAdd;
  add.sbp_signatures = SplitsAnd({AllPartial(2, 1)});
  registry.Add(add);
  OpDefinition sub = Binary("sub", SubGradient);
  sub.sbp_signatures = SplitsAnd({AllPartial(2, 1)});
  registry.Add(sub);
  OpDefinition mul = Binary("mul", MulGradient);
  mul.sbp_signatures = SplitsAnd({PartialThrough(2, 0, 1), PartialThrough(2, 1, 1)});
  registry.Add(mul);

  OpDefinition scale;
  scale.type = "scale";
  scale.input_names = {"x"};
  scale.output_names = {"y"};
  scale.attributes = {RequiredAttribute("factor", AttributeKind::kFloat)};
  scale.infer = InferSameAsFloatInput;
  scale.gradient = ScaleGradient;
  scale.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 1); };
  scale.sbp_signatures = SplitsAnd({AllPartial(1, 1)});
  registry.Add(scale);

  OpDefinition bias_add;
  bias_add.type = "bias_add";
  bias_add.input_names = {"x", "bias"};
  bias_add.output_names = {"y"};
  bias_add.infer = InferBiasAdd;
  bias_add.gradient = BiasAddGradient;
  bias_add.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 1); };
  bias_add.sbp_signatures = SplitsAnd({AllPartial(2, 1)});
  registry.Add(bias_add);

  OpDefinition bias_add_grad;
  bias_add_grad.type = "bias_add_grad";
  bias_add_grad.usage = OpUsage::kInternal;
  bias_add_grad.input_names = {"dy"};
  bias_add_grad.output_names = {"dbias"};
  bias_add_grad.infer = InferBiasAddGrad;
  bias_add_grad.cost = [](const OpSignature& signature) {
    return OpCost{static_cast<double>(signature.inputs[0].NumElements()), TouchedBytes(signature)};
  };
  bias_add_grad.sbp_signatures = BiasAddGradSignatures;
  registry.Add(bias_add_grad);

  OpDefinition identity;
  identity.type = "identity";
  identity.input_names = {"x"};
  identity.output_names = {"y"};
  identity.infer = InferIdentity;
  identity.gradient = IdentityGradient;
  identity.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 0); };
  identity.sbp_signatures = SplitsAnd({AllPartial(1, 1)});
  registry.Add(identity);
}

}  // namespace compiler
}  // namespace softwire
