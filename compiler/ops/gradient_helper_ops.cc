// The internal ops autodiff builds gradients from: fill (the loss seed), add_n (summing
// contributions), sum_to_shape and broadcast_axes (undoing broadcasts and reductions).
#include <algorithm>

#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

Status InferFill(InferenceContext& context) {
  const std::vector<int64_t>& dims = context.attributes().GetInts("shape");
  SOFTWIRE_RETURN_IF_ERROR(CheckPositiveDims(dims, "shape"));
  context.SetOutput(0, Float32(Shape(dims)));
  return Status::Ok();
}

// float32, or bfloat16 (gradients of activations kept in bf16, docs/PRECISION.md).
Status InferAddN(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireFloatingDType(0));
  for (int i = 1; i < context.input_count(); ++i) {
    SOFTWIRE_RETURN_IF_ERROR(context.RequireSameType(i, 0));
  }
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status AddNGradient(GradientBuilder& g) {
  for (size_t i = 0; i < g.forward().inputs.size(); ++i) {
    if (g.wants(static_cast<int>(i))) g.SetInputGradient(static_cast<int>(i), g.output_gradient(0));
  }
  return Status::Ok();
}

Status InferSumToShape(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  Shape shape(context.attributes().GetInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(CheckPositiveDims(shape.dims(), "shape"));
  if (!BroadcastsTo(shape, context.input_shape(0))) {
    return InvalidArgumentError("attribute 'shape' " + shape.ToString() +
                                " does not broadcast to input 'x' " +
                                context.input_shape(0).ToString());
  }
  context.SetOutput(0, Float32(std::move(shape)));
  return Status::Ok();
}

// x must be `shape` with `axes` removed, or with them set to extent 1.
Status InferBroadcastAxes(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  Shape shape(context.attributes().GetInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(CheckPositiveDims(shape.dims(), "shape"));
  SOFTWIRE_ASSIGN_OR_RETURN(
      std::vector<int> axes,
      NormalizeAxes(context.attributes().GetInts("axes"), shape.rank(), "axes", false));
  std::vector<int64_t> removed;
  std::vector<int64_t> kept_as_one;
  for (int axis = 0; axis < shape.rank(); ++axis) {
    bool listed = std::find(axes.begin(), axes.end(), axis) != axes.end();
    if (!listed) removed.push_back(shape.dim(axis));
    kept_as_one.push_back(listed ? 1 : shape.dim(axis));
  }
  const Shape& x = context.input_shape(0);
  if (x != Shape(removed) && x != Shape(kept_as_one)) {
    return InvalidArgumentError("input 'x' " + x.ToString() + " must be " +
                                Shape(removed).ToString() + " or " + Shape(kept_as_one).ToString() +
                                " to broadcast to " + shape.ToString() + " over the given axes");
  }
  context.SetOutput(0, Float32(std::move(shape)));
  return Status::Ok();
}

// x -> y summed to `shape`: a split axis that is summed away leaves partial sums; a kept one
// stays split.
std::vector<SbpSignature> SumToShapeSignatures(const OpSignature& op) {
  const Shape& x = op.inputs[0].shape;
  const Shape& y = op.outputs[0].shape;
  const int leading = x.rank() - y.rank();
  std::vector<SbpSignature> signatures;
  for (int axis = 0; axis < x.rank(); ++axis) {
    const int y_axis = axis - leading;
    const bool summed = y_axis < 0 || (y.dim(y_axis) == 1 && x.dim(axis) != 1);
    signatures.push_back(Signature({S(axis)}, {summed ? kP : S(y_axis)}));
  }
  signatures.push_back(AllPartial(1, 1));
  return signatures;
}

// x -> y broadcast over `axes`: a split x axis splits its y axis; a broadcast x gives every
// part of a split new axis the same values.
std::vector<SbpSignature> BroadcastAxesSignatures(const OpSignature& op) {
  const Shape& x = op.inputs[0].shape;
  const Shape& y = op.outputs[0].shape;
  std::vector<int64_t> axes = op.attributes.GetInts("axes");
  for (int64_t& axis : axes) axis = axis < 0 ? axis + y.rank() : axis;
  std::vector<SbpSignature> signatures;
  int removed = 0;
  for (int axis = 0; axis < y.rank(); ++axis) {
    if (std::find(axes.begin(), axes.end(), axis) != axes.end()) {
      signatures.push_back(Signature({kB}, {S(axis)}));
      ++removed;
      continue;
    }
    const int x_axis = x.rank() == y.rank() ? axis : axis - removed;
    signatures.push_back(Signature({S(x_axis)}, {S(axis)}));
  }
  signatures.push_back(AllPartial(1, 1));
  return signatures;
}

OpDefinition Internal(const std::string& type, std::vector<std::string> inputs) {
  OpDefinition definition;
  definition.type = type;
  definition.usage = OpUsage::kInternal;
  definition.input_names = std::move(inputs);
  definition.output_names = {"y"};
  return definition;
}

}  // namespace

void AddGradientHelperOps(OpRegistry& registry) {
  OpDefinition fill = Internal("fill", {});
  fill.attributes = {RequiredAttribute("shape", AttributeKind::kInts),
                     RequiredAttribute("value", AttributeKind::kFloat)};
  fill.infer = InferFill;
  fill.period_rule = PeriodRule::kPerStep;
  fill.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 0); };
  fill.localize = LocalizeOutputShape;
  registry.Add(fill);

  OpDefinition add_n = Internal("add_n", {"x"});
  add_n.variadic_inputs = true;
  add_n.min_inputs = 2;
  add_n.infer = InferAddN;
  add_n.gradient = AddNGradient;
  add_n.cost = [](const OpSignature& signature) {
    return ElementwiseCost(signature, static_cast<double>(signature.inputs.size() - 1));
  };
  add_n.sbp_signatures = [](const OpSignature& op) {
    std::vector<SbpSignature> signatures = BroadcastingSplits(op);
    signatures.push_back(AllPartial(static_cast<int>(op.inputs.size()), 1));
    return signatures;
  };
  registry.Add(add_n);

  OpDefinition sum_to_shape = Internal("sum_to_shape", {"x"});
  sum_to_shape.attributes = {RequiredAttribute("shape", AttributeKind::kInts)};
  sum_to_shape.infer = InferSumToShape;
  sum_to_shape.cost = [](const OpSignature& signature) {
    return OpCost{static_cast<double>(signature.inputs[0].NumElements()), TouchedBytes(signature)};
  };
  sum_to_shape.sbp_signatures = SumToShapeSignatures;
  sum_to_shape.localize = LocalizeOutputShape;
  registry.Add(sum_to_shape);

  OpDefinition broadcast_axes = Internal("broadcast_axes", {"x"});
  broadcast_axes.attributes = {RequiredAttribute("shape", AttributeKind::kInts),
                               RequiredAttribute("axes", AttributeKind::kInts)};
  broadcast_axes.infer = InferBroadcastAxes;
  broadcast_axes.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 0); };
  broadcast_axes.sbp_signatures = BroadcastAxesSignatures;
  broadcast_axes.localize = LocalizeOutputShape;
  registry.Add(broadcast_axes);
}

}  // namespace compiler
}  // namespace softwire
