// relu, gelu and their gradients relu_grad, gelu_grad (docs/OPS.md).
#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

// relu and relu_grad also take bfloat16 (all operands one type): activations kept in bf16
// between convolutions (docs/PRECISION.md). gelu and gelu_grad: float32 only.
Status InferUnaryFloat(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

// (dy, value) -> dx, all of one type.
Status InferGradientPair(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireSameType(1, 0));
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status InferReluOrBFloat16(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireFloatingDType(0));
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status InferReluGradOrBFloat16(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireFloatingDType(0));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireSameType(1, 0));
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status ReluGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dx,
                            g.Add("x", "relu_grad", {g.output_gradient(0), g.output(0)}));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

Status GeluGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dx,
                            g.Add("x", "gelu_grad", {g.output_gradient(0), g.input(0)}));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

OpDefinition Unary(const std::string& type, double flops_per_element,
                   std::function<Status(GradientBuilder&)> gradient) {
  OpDefinition definition;
  definition.type = type;
  definition.input_names = {"x"};
  definition.output_names = {"y"};
  definition.infer = InferUnaryFloat;
  definition.gradient = std::move(gradient);
  definition.cost = [flops_per_element](const OpSignature& signature) {
    return ElementwiseCost(signature, flops_per_element);
  };
  definition.sbp_signatures = BroadcastingSplits;  // Not linear: no partial signature.
  return definition;
}

// (dy, value) -> dx: elementwise, and linear in dy for a fixed value.
OpDefinition GradientPair(const std::string& type, const std::string& second_input,
                          double flops_per_element) {
  OpDefinition definition;
  definition.type = type;
  definition.usage = OpUsage::kInternal;
  definition.input_names = {"dy", second_input};
  definition.output_names = {"dx"};
  definition.infer = InferGradientPair;
  definition.cost = [flops_per_element](const OpSignature& signature) {
    return ElementwiseCost(signature, flops_per_element);
  };
  definition.sbp_signatures = [](const OpSignature& op) {
    std::vector<SbpSignature> signatures = BroadcastingSplits(op);
    signatures.push_back(PartialThrough(2, 0, 1));
    return signatures;
  };
  return definition;
}

}  // namespace

void AddActivationOps(OpRegistry& registry) {
  OpDefinition relu = Unary("relu", 1, ReluGradient);
  relu.infer = InferReluOrBFloat16;
  registry.Add(relu);
  // tanh counted as ~10 flops.
  registry.Add(Unary("gelu", 18, GeluGradient));
  OpDefinition relu_grad = GradientPair("relu_grad", "y", 1);
  relu_grad.infer = InferReluGradOrBFloat16;
  registry.Add(relu_grad);
  registry.Add(GradientPair("gelu_grad", "x", 30));
}

}  // namespace compiler
}  // namespace softwire
