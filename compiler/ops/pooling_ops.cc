// max_pool2d, avg_pool2d, global_avg_pool, flatten and their gradients (docs/OPS.md), on NCHW
// image batches.
#include "base/image_window.h"
#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

// kernel is required; strides default to the kernel ([] in the schema), padding to [0, 0].
std::vector<AttributeSpec> PoolSchema() {
  return {RequiredAttribute("kernel", AttributeKind::kInts),
          AttributeWithDefault("strides", AttributeValue(std::vector<int64_t>{})),
          AttributeWithDefault("padding", AttributeValue(std::vector<int64_t>{0, 0}))};
}

std::vector<AttributeSpec> PoolGradientSchema() {
  std::vector<AttributeSpec> schema = PoolSchema();
  schema.push_back(RequiredAttribute("shape", AttributeKind::kInts));
  return schema;
}

Status RequireImages(const InferenceContext& context, int index) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(index, DType::kFloat32));
  if (context.input_shape(index).rank() != 4) {
    return InvalidArgumentError(context.InputLabel(index) +
                                " must be an NCHW image batch of rank 4, got " +
                                context.input(index).ToString());
  }
  return Status::Ok();
}

// The pooled shape of images `x`. A padding over half the kernel would let a window hold only
// padding (PyTorch rejects it too).
StatusOr<Shape> PooledShape(const AttributeMap& attributes, const Shape& x) {
  const std::vector<int64_t>& kernel = attributes.GetInts("kernel");
  const std::vector<int64_t>& strides = attributes.GetInts("strides");
  SOFTWIRE_ASSIGN_OR_RETURN(
      ImageWindow window,
      MakeImageWindow(x.dim(2), x.dim(3), kernel, "attribute 'kernel'",
                      strides.empty() ? kernel : strides, attributes.GetInts("padding"), {}));
  for (int axis = 0; axis < 2; ++axis) {
    if (2 * window.padding[axis] > window.kernel[axis]) {
      return InvalidArgumentError(
          "attribute 'padding' " + Shape(attributes.GetInts("padding")).ToString() +
          " must be at most half of attribute 'kernel' " + Shape(kernel).ToString());
    }
  }
  return Shape({x.dim(0), x.dim(1), window.output[0], window.output[1]});
}

Status InferPool(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(RequireImages(context, 0));
  SOFTWIRE_ASSIGN_OR_RETURN(Shape y, PooledShape(context.attributes(), context.input_shape(0)));
  context.SetOutput(0, Float32(y));
  return Status::Ok();
}

Status RequireShaped(const InferenceContext& context, int index, const Shape& expected) {
  if (context.input_shape(index) != expected) {
    return InvalidArgumentError(context.InputLabel(index) + " must be " + expected.ToString() +
                                ", got " + context.input_shape(index).ToString());
  }
  return Status::Ok();
}

// (dy, x) -> dx.
Status InferMaxPoolGrad(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(RequireImages(context, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(Shape y, PooledShape(context.attributes(), context.input_shape(1)));
  SOFTWIRE_RETURN_IF_ERROR(RequireShaped(context, 0, y));
  context.SetOutput(0, context.input(1));
  return Status::Ok();
}

// (dy) -> dx of shape `shape`.
Status InferAvgPoolGrad(InferenceContext& context) {
  Shape x(context.attributes().GetInts("shape"));
  if (x.rank() != 4) {
    return InvalidArgumentError("attribute 'shape' must have rank 4, got " + x.ToString());
  }
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_ASSIGN_OR_RETURN(Shape y, PooledShape(context.attributes(), x));
  SOFTWIRE_RETURN_IF_ERROR(RequireShaped(context, 0, y));
  context.SetOutput(0, Float32(x));
  return Status::Ok();
}

AttributeMap PoolGradientAttributes(const GradientBuilder& g) {
  AttributeMap attributes;
  for (const char* name : {"kernel", "strides", "padding"}) {
    attributes.Set(name, g.attributes().GetInts(name));
  }
  return attributes;
}

Status MaxPoolGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(
      TensorId dx,
      g.Add("x", "max_pool2d_grad", {g.output_gradient(0), g.input(0)}, PoolGradientAttributes(g)));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

Status AvgPoolGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  AttributeMap attributes = PoolGradientAttributes(g);
  attributes.Set("shape", g.shape(g.input(0)).dims());
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dx,
                            g.Add("x", "avg_pool2d_grad", {g.output_gradient(0)}, attributes));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

// x [N, C, H, W] -> y [N, C].
// x float32 or bfloat16 (activations kept in bf16, docs/PRECISION.md); y float32.
Status InferGlobalAvgPool(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireFloatingDType(0));
  if (context.input(0).dtype == DType::kBFloat16) {
    SOFTWIRE_RETURN_IF_ERROR(context.RequireRank(0, 4));
  } else {
    SOFTWIRE_RETURN_IF_ERROR(RequireImages(context, 0));
  }
  const Shape& x = context.input_shape(0);
  context.SetOutput(0, Float32(Shape({x.dim(0), x.dim(1)})));
  return Status::Ok();
}

// dy [N, C] -> dx of shape `shape` [N, C, H, W].
Status InferGlobalAvgPoolGrad(InferenceContext& context) {
  Shape x(context.attributes().GetInts("shape"));
  if (x.rank() != 4) {
    return InvalidArgumentError("attribute 'shape' must have rank 4, got " + x.ToString());
  }
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(RequireShaped(context, 0, Shape({x.dim(0), x.dim(1)})));
  context.SetOutput(0, Float32(x));
  return Status::Ok();
}

Status GlobalAvgPoolGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dx, g.Add("x", "global_avg_pool_grad", {g.output_gradient(0)},
                                               Attributes("shape", g.shape(g.input(0)).dims())));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

// x [N, ...] -> y [N, product of the rest].
Status InferFlatten(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 1));
  const Shape& x = context.input_shape(0);
  context.SetOutput(
      0, TensorType{context.input(0).dtype, Shape({x.dim(0), x.NumElements(1, x.rank())})});
  return Status::Ok();
}

Status FlattenGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dx, g.Add("x", "reshape", {g.output_gradient(0)},
                                               Attributes("shape", g.shape(g.input(0)).dims())));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

// Every input and the output split alike on the batch or on the channels.
std::vector<SbpSignature> BatchOrChannelSplits(const OpSignature& op) {
  const size_t inputs = op.inputs.size();
  std::vector<SbpSignature> signatures;
  for (int axis : {0, 1}) {
    signatures.push_back(Signature(std::vector<placement::Sbp>(inputs, S(axis)), {S(axis)}));
  }
  return signatures;
}

std::vector<SbpSignature> BatchOrChannelSplitsAndPartial(const OpSignature& op) {
  std::vector<SbpSignature> signatures = BatchOrChannelSplits(op);
  signatures.push_back(PartialThrough(1, 0, 1));  // Linear ops: avg pools and their grads.
  return signatures;
}

OpDefinition PoolDefinition(const std::string& type, std::vector<std::string> inputs,
                            std::vector<AttributeSpec> attributes,
                            std::function<Status(InferenceContext&)> infer) {
  OpDefinition definition;
  definition.type = type;
  definition.input_names = std::move(inputs);
  definition.output_names = {definition.input_names[0] == "dy" ? "dx" : "y"};
  definition.attributes = std::move(attributes);
  definition.infer = std::move(infer);
  definition.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 4); };
  definition.sbp_signatures = BatchOrChannelSplits;
  return definition;
}

}  // namespace

void AddPoolingOps(OpRegistry& registry) {
  OpDefinition max_pool = PoolDefinition("max_pool2d", {"x"}, PoolSchema(), InferPool);
  max_pool.gradient = MaxPoolGradient;
  registry.Add(max_pool);

  OpDefinition max_pool_grad =
      PoolDefinition("max_pool2d_grad", {"dy", "x"}, PoolSchema(), InferMaxPoolGrad);
  max_pool_grad.usage = OpUsage::kInternal;
  registry.Add(max_pool_grad);

  OpDefinition avg_pool = PoolDefinition("avg_pool2d", {"x"}, PoolSchema(), InferPool);
  avg_pool.gradient = AvgPoolGradient;
  avg_pool.sbp_signatures = BatchOrChannelSplitsAndPartial;
  registry.Add(avg_pool);

  OpDefinition avg_pool_grad =
      PoolDefinition("avg_pool2d_grad", {"dy"}, PoolGradientSchema(), InferAvgPoolGrad);
  avg_pool_grad.usage = OpUsage::kInternal;
  avg_pool_grad.sbp_signatures = BatchOrChannelSplitsAndPartial;
  avg_pool_grad.localize = LocalizeOutputShape;
  registry.Add(avg_pool_grad);

  OpDefinition global_pool = PoolDefinition("global_avg_pool", {"x"}, {}, InferGlobalAvgPool);
  global_pool.gradient = GlobalAvgPoolGradient;
  global_pool.sbp_signatures = BatchOrChannelSplitsAndPartial;
  registry.Add(global_pool);

  OpDefinition global_pool_grad =
      PoolDefinition("global_avg_pool_grad", {"dy"},
                     {RequiredAttribute("shape", AttributeKind::kInts)}, InferGlobalAvgPoolGrad);
  global_pool_grad.usage = OpUsage::kInternal;
  global_pool_grad.sbp_signatures = BatchOrChannelSplitsAndPartial;
  global_pool_grad.localize = LocalizeOutputShape;
  registry.Add(global_pool_grad);

  OpDefinition flatten;
  flatten.type = "flatten";
  flatten.input_names = {"x"};
  flatten.output_names = {"y"};
  flatten.infer = InferFlatten;
  flatten.gradient = FlattenGradient;
  flatten.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 0); };
  flatten.sbp_signatures = [](const OpSignature&) {
    return std::vector<SbpSignature>{Signature({S(0)}, {S(0)}), PartialThrough(1, 0, 1)};
  };
  registry.Add(flatten);
}

}  // namespace compiler
}  // namespace softwire
