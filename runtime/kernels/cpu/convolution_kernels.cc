// conv2d, conv2d_grad_input and conv2d_grad_filter: each kernel owns the oneDNN primitives of
// its shape (onednn_convolution.h), created with the kernel. Image operands may be in any
// layout of base/layout.h (each its own: the first convolution reads a plain input and writes
// nChw16c); filters are plain.
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/onednn_convolution.h"

namespace softwire {
namespace runtime {
namespace {

// Reads the window attributes and checks x, w and y against each other.
StatusOr<ConvolutionShape> ReadConvolutionShape(const proto::KernelDef& def, const Shape& x,
                                                const Shape& w) {
  KernelAttributes attributes(def);
  ConvolutionShape shape;
  const std::vector<int64_t> strides = attributes.Ints("strides", {1, 1});
  const std::vector<int64_t> padding = attributes.Ints("padding", {0, 0});
  const std::vector<int64_t> dilation = attributes.Ints("dilation", {1, 1});
  shape.groups = attributes.Int("groups", 1);
  const std::string output_dtype = attributes.String("output_dtype", "float32");
  if (def.op_type() != "conv2d") attributes.RequiredInts("shape");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  if (x.rank() != 4 || w.rank() != 4) {
    return KernelDefError(def, "x " + x.ToString() + " and w " + w.ToString() + " need rank 4");
  }
  if (shape.groups < 1 || x.dim(1) % shape.groups != 0 || w.dim(0) % shape.groups != 0 ||
      w.dim(1) * shape.groups != x.dim(1)) {
    return KernelDefError(def, "groups " + std::to_string(shape.groups) + " does not fit x " +
                                   x.ToString() + " and w " + w.ToString());
  }
  StatusOr<ImageWindow> window =
      MakeImageWindow(x.dim(2), x.dim(3), {w.dim(2), w.dim(3)}, "w", strides, padding, dilation);
  if (!window.ok()) return KernelDefError(def, window.status().message());
  if (output_dtype == "bfloat16" && def.op_type() != "conv2d_grad_filter") {
    shape.output_dtype = DType::kBFloat16;
  } else if (output_dtype != "float32") {
    return KernelDefError(
        def, "output_dtype must be float32" +
                 std::string(def.op_type() != "conv2d_grad_filter" ? " or bfloat16"
                                                                   : " for a weight gradient") +
                 ", not '" + output_dtype + "'");
  }
  shape.x = x;
  shape.w = w;
  shape.window = *window;
  shape.y = Shape({x.dim(0), w.dim(0), window->output[0], window->output[1]});
  return shape;
}

// Float32 or bfloat16 for both product inputs; out float32, or bfloat16 (output_dtype) for y
// and dx.
StatusOr<DType> ProductDType(const proto::KernelDef& def) {
  if (def.input_size() < 2) return KernelDefError(def, "needs at least two inputs");
  const DType dtype = DTypeOf(def.input(0));
  if (dtype != DType::kFloat32 && dtype != DType::kBFloat16) {
    return KernelDefError(def, "inputs must be float32 or bfloat16");
  }
  return dtype;
}

class ConvolutionKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_ASSIGN_OR_RETURN(DType dtype, ProductDType(def));
    ConvolutionPass pass;
    ConvolutionShape shape;
    if (def.op_type() == "conv2d") {
      pass = ConvolutionPass::kForward;
      const bool has_bias = def.input_size() == 3;
      std::vector<std::string> names = {"x", "w"};
      std::vector<DType> dtypes = {dtype, dtype};
      if (has_bias) {
        names.push_back("bias");
        dtypes.push_back(DType::kFloat32);
      }
      SOFTWIRE_ASSIGN_OR_RETURN(
          shape, ReadConvolutionShape(def, ShapeOf(def.input(0)), ShapeOf(def.input(1))));
      SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, names, dtypes, {"y"}, {shape.output_dtype}));
      shape.has_bias = has_bias;
      if (has_bias) {
        SOFTWIRE_RETURN_IF_ERROR(
            CheckShape(def, "input bias", ShapeOf(def.input(2)), Shape({shape.w.dim(0)})));
      }
      SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), shape.y));
    } else if (def.op_type() == "conv2d_grad_input") {
      pass = ConvolutionPass::kBackwardData;
      SOFTWIRE_ASSIGN_OR_RETURN(
          shape, ReadConvolutionShape(def, ShapeOf(def.output(0)), ShapeOf(def.input(1))));
      SOFTWIRE_RETURN_IF_ERROR(
          CheckSignature(def, {"dy", "w"}, {dtype, dtype}, {"dx"}, {shape.output_dtype}));
      SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input dy", ShapeOf(def.input(0)), shape.y));
    } else {
      pass = ConvolutionPass::kBackwardWeights;
      SOFTWIRE_RETURN_IF_ERROR(
          CheckSignature(def, {"dy", "x"}, {dtype, dtype}, {"dw"}, {DType::kFloat32}));
      SOFTWIRE_ASSIGN_OR_RETURN(
          shape, ReadConvolutionShape(def, ShapeOf(def.input(1)), ShapeOf(def.output(0))));
      SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input dy", ShapeOf(def.input(0)), shape.y));
    }
    shape.input_dtype = dtype;
    if (shape.output_dtype == DType::kBFloat16 && dtype != DType::kBFloat16) {
      return KernelDefError(def, "a bfloat16 output needs bfloat16 inputs");
    }
    // Image operands in the layouts the plan gives them; filters plain.
    const bool forward = pass == ConvolutionPass::kForward;
    const proto::TensorDesc& x_desc =
        forward ? def.input(0)
                : (pass == ConvolutionPass::kBackwardData ? def.output(0) : def.input(1));
    const proto::TensorDesc& y_desc = forward ? def.output(0) : def.input(0);
    const proto::TensorDesc& w_desc =
        pass == ConvolutionPass::kBackwardWeights ? def.output(0) : def.input(1);
    shape.x_layout = LayoutOf(x_desc);
    shape.y_layout = LayoutOf(y_desc);
    if (LayoutOf(w_desc) != Layout::kPlain) return KernelDefError(def, "filters must be plain");
    if (!LayoutFits(shape.x_layout, shape.x) || !LayoutFits(shape.y_layout, shape.y)) {
      return KernelDefError(def, "x " + shape.x.ToString() + " in " + LayoutName(shape.x_layout) +
                                     " or y " + shape.y.ToString() + " in " +
                                     LayoutName(shape.y_layout) + " does not fit its layout");
    }
    StatusOr<std::unique_ptr<OneDnnConvolution>> convolution =
        OneDnnConvolution::Create(pass, shape);
    if (!convolution.ok()) return KernelDefError(def, convolution.status().message());
    return std::unique_ptr<Kernel>(new ConvolutionKernel(std::move(*convolution), shape.has_bias));
  }

  Status Run(const KernelContext& context) override {
    const float* bias = has_bias_ ? context.inputs[2].As<float>() : nullptr;
    convolution_->Run(context.parallel, context.inputs[0].data, context.inputs[1].data, bias,
                      context.outputs[0].data);
    return Status::Ok();
  }

 private:
  ConvolutionKernel(std::unique_ptr<OneDnnConvolution> convolution, bool has_bias)
      : convolution_(std::move(convolution)), has_bias_(has_bias) {}

  std::unique_ptr<OneDnnConvolution> convolution_;
  const bool has_bias_;
};

}  // namespace

void RegisterConvolutionKernels(KernelRegistry* registry) {
  registry->Register("conv2d", ConvolutionKernel::Create);
  registry->Register("conv2d_grad_input", ConvolutionKernel::Create);
  registry->Register("conv2d_grad_filter", ConvolutionKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
