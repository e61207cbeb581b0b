// conv2d, conv2d_grad_input and conv2d_grad_filter by the definition of docs/OPS.md: one loop
// over every (output element, filter tap) pair, which the three ops read in their own way.
#include "base/image_window.h"
#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

// x [N, C, H, W], w [O, C / groups, KH, KW], y [N, O, OH, OW] and the window between them.
struct ConvolutionGeometry {
  Shape x;
  Shape w;
  Shape y;
  int64_t groups = 1;
  ImageWindow window;
};

StatusOr<ConvolutionGeometry> ReadGeometry(const ReferenceKernelCall& call,
                                           KernelAttributes& attributes, const Shape& x,
                                           const Shape& w) {
  ConvolutionGeometry geometry;
  const std::vector<int64_t> strides = attributes.Ints("strides", {1, 1});
  const std::vector<int64_t> padding = attributes.Ints("padding", {0, 0});
  const std::vector<int64_t> dilation = attributes.Ints("dilation", {1, 1});
  geometry.groups = attributes.Int("groups", 1);
  // float32 or bfloat16 (conv2d, conv2d_grad_input): the output's dtype, which the plan's
  // TensorDesc already carries; ReferenceKernelTable::Run rounds a bfloat16 output.
  attributes.String("output_dtype", "float32");
  if (x.rank() != 4 || w.rank() != 4) return OpError(call, "x and w must have rank 4");
  if (geometry.groups < 1 || x.dim(1) % geometry.groups != 0 || w.dim(0) % geometry.groups != 0 ||
      w.dim(1) * geometry.groups != x.dim(1)) {
    return OpError(call, "groups " + std::to_string(geometry.groups) + " does not fit x " +
                             x.ToString() + " and w " + w.ToString());
  }
  StatusOr<ImageWindow> window =
      MakeImageWindow(x.dim(2), x.dim(3), {w.dim(2), w.dim(3)}, "w", strides, padding, dilation);
  if (!window.ok()) return OpError(call, window.status().message());
  geometry.x = x;
  geometry.w = w;
  geometry.window = *window;
  geometry.y = Shape({x.dim(0), w.dim(0), window->output[0], window->output[1]});
  return geometry;
}

// Calls tap(y_index, x_index, w_index) for every output element and every filter tap that
// falls inside the (unpadded) input; indices are row-major positions.
template <typename Tap>
void ForEachTap(const ConvolutionGeometry& g, Tap tap) {
  const ImageWindow& win = g.window;
  const int64_t out_channels = g.w.dim(0);
  const int64_t group_in = g.w.dim(1);
  const int64_t group_out = out_channels / g.groups;
  for (int64_t n = 0; n < g.x.dim(0); ++n) {
    for (int64_t o = 0; o < out_channels; ++o) {
      const int64_t first_channel = (o / group_out) * group_in;
      for (int64_t oh = 0; oh < win.output[0]; ++oh) {
        for (int64_t ow = 0; ow < win.output[1]; ++ow) {
          const int64_t y_index = Ravel({n, o, oh, ow}, g.y);
          for (int64_t c = 0; c < group_in; ++c) {
            for (int64_t kh = 0; kh < win.kernel[0]; ++kh) {
              const int64_t ih = oh * win.stride[0] - win.padding[0] + kh * win.dilation[0];
              if (ih < 0 || ih >= win.input[0]) continue;
              for (int64_t kw = 0; kw < win.kernel[1]; ++kw) {
                const int64_t iw = ow * win.stride[1] - win.padding[1] + kw * win.dilation[1];
                if (iw < 0 || iw >= win.input[1]) continue;
                tap(y_index, Ravel({n, first_channel + c, ih, iw}, g.x),
                    Ravel({o, c, kh, kw}, g.w));
              }
            }
          }
        }
      }
    }
  }
}

// (x, w[, bias]) -> y.
Status Conv2d(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  if (call.inputs.size() != 2 && call.inputs.size() != 3) {
    return OpError(call, "takes (x, w) or (x, w, bias)");
  }
  SOFTWIRE_ASSIGN_OR_RETURN(
      ConvolutionGeometry g,
      ReadGeometry(call, attributes, Input(call, 0).shape, Input(call, 1).shape));
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, call.inputs.size(), 1));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, g.y));
  const std::vector<double>& x = Input(call, 0).values;
  const std::vector<double>& w = Input(call, 1).values;
  std::vector<double>& y = Output(call, 0).values;
  std::fill(y.begin(), y.end(), 0.0);
  ForEachTap(g, [&](int64_t yi, int64_t xi, int64_t wi) { y[yi] += x[xi] * w[wi]; });
  if (call.inputs.size() == 3) {
    const std::vector<double>& bias = Input(call, 2).values;
    if (Input(call, 2).shape != Shape({g.y.dim(1)})) return OpError(call, "bias must be [O]");
    const int64_t plane = g.y.dim(2) * g.y.dim(3);
    for (int64_t i = 0; i < g.y.NumElements(); ++i) y[i] += bias[(i / plane) % g.y.dim(1)];
  }
  return Status::Ok();
}

// (dy, w) -> dx of shape `shape`.
Status Conv2dGradInput(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const Shape x(attributes.RequiredInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(ConvolutionGeometry g,
                            ReadGeometry(call, attributes, x, Input(call, 1).shape));
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  if (Input(call, 0).shape != g.y) return OpError(call, "dy must be " + g.y.ToString());
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x));
  const std::vector<double>& dy = Input(call, 0).values;
  const std::vector<double>& w = Input(call, 1).values;
  std::vector<double>& dx = Output(call, 0).values;
  std::fill(dx.begin(), dx.end(), 0.0);
  ForEachTap(g, [&](int64_t yi, int64_t xi, int64_t wi) { dx[xi] += dy[yi] * w[wi]; });
  return Status::Ok();
}

// (dy, x) -> dw of shape `shape`.
Status Conv2dGradFilter(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const Shape w(attributes.RequiredInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(ConvolutionGeometry g,
                            ReadGeometry(call, attributes, Input(call, 1).shape, w));
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  if (Input(call, 0).shape != g.y) return OpError(call, "dy must be " + g.y.ToString());
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, w));
  const std::vector<double>& dy = Input(call, 0).values;
  const std::vector<double>& x = Input(call, 1).values;
  std::vector<double>& dw = Output(call, 0).values;
  std::fill(dw.begin(), dw.end(), 0.0);
  ForEachTap(g, [&](int64_t yi, int64_t xi, int64_t wi) { dw[wi] += dy[yi] * x[xi]; });
  return Status::Ok();
}

}  // namespace

void RegisterReferenceConvolutionKernels(ReferenceKernelTable* table) {
  table->Register("conv2d", Conv2d);
  table->Register("conv2d_grad_input", Conv2dGradInput);
  table->Register("conv2d_grad_filter", Conv2dGradFilter);
}

}  // namespace reference
}  // namespace softwire
