// conv2d, conv2d_grad_input and conv2d_grad_filter (docs/OPS.md): NCHW images, filters
// [O, C / groups, KH, KW], stride, padding, dilation and groups as PyTorch's Conv2d has them.
//
// Products of the precision policy (docs/PRECISION.md): x and w (dy and w, dy and x for the
// gradients) are both float32 or both bfloat16; outputs are float32, except that conv2d and
// conv2d_grad_input write bfloat16 with `output_dtype: "bfloat16"` (bf16 operands only): the
// precision policy's activations kept in bf16 between convolutions. Weight gradients stay
// float32.
#include "base/image_window.h"
#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

std::vector<AttributeSpec> ConvolutionSchema() {
  return {AttributeWithDefault("strides", AttributeValue(std::vector<int64_t>{1, 1})),
          AttributeWithDefault("padding", AttributeValue(std::vector<int64_t>{0, 0})),
          AttributeWithDefault("dilation", AttributeValue(std::vector<int64_t>{1, 1})),
          AttributeWithDefault("groups", AttributeValue(int64_t{1})),
          AttributeWithDefault("output_dtype", AttributeValue(std::string("float32")))};
}

// The schema of the gradient ops: the forward op's attributes and the output's shape.
std::vector<AttributeSpec> ConvolutionGradientSchema() {
  std::vector<AttributeSpec> schema = ConvolutionSchema();
  schema.push_back(RequiredAttribute("shape", AttributeKind::kInts));
  return schema;
}

AttributeMap ConvolutionAttributes(const AttributeMap& forward, const Shape& shape) {
  AttributeMap attributes;
  for (const char* name : {"strides", "padding", "dilation"}) {
    attributes.Set(name, forward.GetInts(name));
  }
  attributes.Set("groups", forward.GetInt("groups"));
  attributes.Set("shape", shape.dims());  // output_dtype: float32 (the policy sets it).
  return attributes;
}

// Both operands float32 or both bfloat16 (the precision policy's products).
Status RequireProductDTypes(const InferenceContext& context, int a, int b) {
  if (context.input(a).dtype == DType::kBFloat16) return context.RequireDType(b, DType::kBFloat16);
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(a, DType::kFloat32));
  return context.RequireDType(b, DType::kFloat32);
}

// The output's dtype: attribute output_dtype, bfloat16 only where the operands are bfloat16
// and `allow_bfloat16` (not for weight gradients).
StatusOr<DType> OutputDType(const InferenceContext& context, bool allow_bfloat16) {
  const std::string& name = context.attributes().GetString("output_dtype");
  if (name == "float32") return DType::kFloat32;
  if (name != "bfloat16") {
    return InvalidArgumentError("attribute 'output_dtype' must be float32 or bfloat16, not '" +
                                name + "'");
  }
  if (!allow_bfloat16) {
    return InvalidArgumentError("attribute 'output_dtype' must be float32 for a weight gradient");
  }
  if (context.input(0).dtype != DType::kBFloat16) {
    return InvalidArgumentError("attribute 'output_dtype' bfloat16 needs bfloat16 operands, got " +
                                context.input(0).ToString());
  }
  return DType::kBFloat16;
}

// The checked geometry of a convolution of x [N, C, H, W] with w [O, C / groups, KH, KW]:
// labels name where each shape came from in errors.
struct Convolution {
  Shape output;  // [N, O, OH, OW].
};

StatusOr<Convolution> CheckConvolution(const AttributeMap& attributes, const Shape& x,
                                       const std::string& x_label, const Shape& w,
                                       const std::string& w_label) {
  if (x.rank() != 4) {
    return InvalidArgumentError(x_label + " must be an NCHW image batch of rank 4, got " +
                                x.ToString());
  }
  if (w.rank() != 4) {
    return InvalidArgumentError(
        w_label + " must be a filter [O, C / groups, KH, KW] of rank 4, got " + w.ToString());
  }
  const int64_t groups = attributes.GetInt("groups");
  if (groups < 1) {
    return InvalidArgumentError("attribute 'groups' must be >= 1, got " + std::to_string(groups));
  }
  const int64_t channels = x.dim(1);
  const int64_t out_channels = w.dim(0);
  if (channels % groups != 0) {
    return InvalidArgumentError("attribute 'groups' (" + std::to_string(groups) +
                                ") does not divide the " + std::to_string(channels) +
                                " channels of " + x_label + " " + x.ToString());
  }
  if (out_channels % groups != 0) {
    return InvalidArgumentError("attribute 'groups' (" + std::to_string(groups) +
                                ") does not divide the " + std::to_string(out_channels) +
                                " output channels of " + w_label + " " + w.ToString());
  }
  if (w.dim(1) != channels / groups) {
    return InvalidArgumentError(w_label + " " + w.ToString() + " must have C / groups = " +
                                std::to_string(channels / groups) + " input channels (" + x_label +
                                " is " + x.ToString() + ", groups " + std::to_string(groups) + ")");
  }
  SOFTWIRE_ASSIGN_OR_RETURN(
      ImageWindow window,
      MakeImageWindow(x.dim(2), x.dim(3), {w.dim(2), w.dim(3)}, w_label,
                      attributes.GetInts("strides"), attributes.GetInts("padding"),
                      attributes.GetInts("dilation")));
  return Convolution{Shape({x.dim(0), out_channels, window.output[0], window.output[1]})};
}

// (x, w[, bias]) -> y.
Status InferConv2d(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(RequireProductDTypes(context, 0, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(
      Convolution convolution,
      CheckConvolution(context.attributes(), context.input_shape(0), context.InputLabel(0),
                       context.input_shape(1), context.InputLabel(1)));
  if (context.input_count() == 3) {
    SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(2, DType::kFloat32));
    const Shape bias({context.input_shape(1).dim(0)});
    if (context.input_shape(2) != bias) {
      return InvalidArgumentError(context.InputLabel(2) + " must be " + bias.ToString() +
                                  " (one value per output channel), got " +
                                  context.input_shape(2).ToString());
    }
  }
  SOFTWIRE_ASSIGN_OR_RETURN(DType output, OutputDType(context, /*allow_bfloat16=*/true));
  context.SetOutput(0, TensorType{output, convolution.output});
  return Status::Ok();
}

// The output's `shape` attribute, checked to be rank 4.
StatusOr<Shape> ShapeAttribute(const InferenceContext& context) {
  Shape shape(context.attributes().GetInts("shape"));
  if (shape.rank() != 4) {
    return InvalidArgumentError("attribute 'shape' must have rank 4, got " + shape.ToString());
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckPositiveDims(shape.dims(), "shape"));
  return shape;
}

Status RequireOutputGradientShape(const InferenceContext& context, const Shape& expected) {
  if (context.input_shape(0) != expected) {
    return InvalidArgumentError(context.InputLabel(0) + " must be " + expected.ToString() +
                                ", the convolution's output, got " +
                                context.input_shape(0).ToString());
  }
  return Status::Ok();
}

// (dy, w) -> dx of shape `shape`.
Status InferConv2dGradInput(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(RequireProductDTypes(context, 0, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(Shape x, ShapeAttribute(context));
  SOFTWIRE_ASSIGN_OR_RETURN(Convolution convolution,
                            CheckConvolution(context.attributes(), x, "attribute 'shape'",
                                             context.input_shape(1), context.InputLabel(1)));
  SOFTWIRE_RETURN_IF_ERROR(RequireOutputGradientShape(context, convolution.output));
  SOFTWIRE_ASSIGN_OR_RETURN(DType output, OutputDType(context, /*allow_bfloat16=*/true));
  context.SetOutput(0, TensorType{output, x});
  return Status::Ok();
}

// (dy, x) -> dw of shape `shape`.
Status InferConv2dGradFilter(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(RequireProductDTypes(context, 0, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(Shape w, ShapeAttribute(context));
  SOFTWIRE_ASSIGN_OR_RETURN(Convolution convolution,
                            CheckConvolution(context.attributes(), context.input_shape(1),
                                             context.InputLabel(1), w, "attribute 'shape'"));
  SOFTWIRE_RETURN_IF_ERROR(RequireOutputGradientShape(context, convolution.output));
  SOFTWIRE_RETURN_IF_ERROR(OutputDType(context, /*allow_bfloat16=*/false).status());
  context.SetOutput(0, Float32(w));
  return Status::Ok();
}

// dx = conv2d_grad_input(dy, w), dw = conv2d_grad_filter(dy, x), dbias = sum of dy over the
// batch and both spatial axes.
Status Conv2dGradient(GradientBuilder& g) {
  const TensorId dy = g.output_gradient(0);
  if (g.wants(0)) {
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId dx,
                              g.Add("x", "conv2d_grad_input", {dy, g.input(1)},
                                    ConvolutionAttributes(g.attributes(), g.shape(g.input(0)))));
    g.SetInputGradient(0, dx);
  }
  if (g.wants(1)) {
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId dw,
                              g.Add("w", "conv2d_grad_filter", {dy, g.input(0)},
                                    ConvolutionAttributes(g.attributes(), g.shape(g.input(1)))));
    g.SetInputGradient(1, dw);
  }
  if (g.forward().inputs.size() == 3 && g.wants(2)) {
    AttributeMap sum;
    sum.Set("axes", std::vector<int64_t>{0, 2, 3});
    sum.Set("keepdims", false);
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId dbias, g.Add("bias", "reduce_sum", {dy}, sum));
    g.SetInputGradient(2, dbias);
  }
  return Status::Ok();
}

// 2 * N * O * OH * OW * (C / groups) * KH * KW multiply-adds, for the forward op and both
// gradients alike: `image` is the [N, O, OH, OW] side, `filter` the filter.
OpCost ConvolutionCost(const OpSignature& signature, const Shape& image, const Shape& filter) {
  const double flops =
      2.0 * static_cast<double>(image.NumElements()) *
      static_cast<double>(filter.NumElements() / std::max<int64_t>(1, filter.dim(0)));
  return OpCost{flops, TouchedBytes(signature), /*product=*/true};
}

bool Ungrouped(const OpSignature& op) {
  return op.attributes.GetInt("groups") == 1;
}

// Data parallel: x split on the batch. Tensor parallel (groups 1): w split on output channels
// gives y split on its channels. Without a bias, y is linear in x: partial passes through.
std::vector<SbpSignature> Conv2dSignatures(const OpSignature& op) {
  const bool has_bias = op.inputs.size() == 3;
  std::vector<SbpSignature> signatures;
  if (has_bias) {
    signatures.push_back(Signature({S(0), kB, kB}, {S(0)}));
    if (Ungrouped(op)) signatures.push_back(Signature({kB, S(0), S(0)}, {S(1)}));
  } else {
    signatures.push_back(Signature({S(0), kB}, {S(0)}));
    if (Ungrouped(op)) signatures.push_back(Signature({kB, S(0)}, {S(1)}));
    signatures.push_back(PartialThrough(2, 0, 1));
  }
  return signatures;
}

// (dy, w) -> dx: dy split on the batch gives dx split on it; dy and w split on output channels
// give partial sums of dx.
std::vector<SbpSignature> Conv2dGradInputSignatures(const OpSignature& op) {
  std::vector<SbpSignature> signatures = {Signature({S(0), kB}, {S(0)}), PartialThrough(2, 0, 1)};
  if (Ungrouped(op)) signatures.push_back(Signature({S(1), S(0)}, {kP}));
  return signatures;
}

// (dy, x) -> dw: both split on the batch give partial sums of dw; dy split on output channels
// gives dw split on them.
std::vector<SbpSignature> Conv2dGradFilterSignatures(const OpSignature& op) {
  std::vector<SbpSignature> signatures = {Signature({S(0), S(0)}, {kP}), PartialThrough(2, 0, 1)};
  if (Ungrouped(op)) signatures.push_back(Signature({S(1), kB}, {S(0)}));
  return signatures;
}

}  // namespace

void AddConvolutionOps(OpRegistry& registry) {
  OpDefinition conv2d;
  conv2d.type = "conv2d";
  conv2d.input_names = {"x", "w", "bias"};
  conv2d.optional_inputs = 1;
  conv2d.output_names = {"y"};
  conv2d.attributes = ConvolutionSchema();
  conv2d.infer = InferConv2d;
  conv2d.gradient = Conv2dGradient;
  conv2d.cost = [](const OpSignature& signature) {
    return ConvolutionCost(signature, signature.outputs[0].shape, signature.inputs[1].shape);
  };
  conv2d.sbp_signatures = Conv2dSignatures;
  registry.Add(conv2d);

  OpDefinition grad_input;
  grad_input.type = "conv2d_grad_input";
  grad_input.usage = OpUsage::kInternal;
  grad_input.input_names = {"dy", "w"};
  grad_input.output_names = {"dx"};
  grad_input.attributes = ConvolutionGradientSchema();
  grad_input.infer = InferConv2dGradInput;
  grad_input.cost = [](const OpSignature& signature) {
    return ConvolutionCost(signature, signature.inputs[0].shape, signature.inputs[1].shape);
  };
  grad_input.sbp_signatures = Conv2dGradInputSignatures;
  grad_input.localize = LocalizeOutputShape;
  registry.Add(grad_input);

  OpDefinition grad_filter;
  grad_filter.type = "conv2d_grad_filter";
  grad_filter.usage = OpUsage::kInternal;
  grad_filter.input_names = {"dy", "x"};
  grad_filter.output_names = {"dw"};
  grad_filter.attributes = ConvolutionGradientSchema();
  grad_filter.infer = InferConv2dGradFilter;
  grad_filter.cost = [](const OpSignature& signature) {
    return ConvolutionCost(signature, signature.inputs[0].shape, signature.outputs[0].shape);
  };
  grad_filter.sbp_signatures = Conv2dGradFilterSignatures;
  grad_filter.localize = LocalizeOutputShape;
  registry.Add(grad_filter);
}

}  // namespace compiler
}  // namespace softwire
