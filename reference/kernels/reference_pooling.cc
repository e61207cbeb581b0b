// max_pool2d, avg_pool2d, global_avg_pool, their gradients, and flatten, by the definitions of
// docs/OPS.md. Max pooling ignores padding (-infinity there) and its gradient goes to the first
// maximum of each window in row-major order; average pooling divides by the kernel's area,
// padding included (PyTorch's count_include_pad=True).
#include <limits>

#include "base/image_window.h"
#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

StatusOr<ImageWindow> ReadWindow(const ReferenceKernelCall& call, KernelAttributes& attributes,
                                 const Shape& x) {
  const std::vector<int64_t> kernel = attributes.RequiredInts("kernel");
  const std::vector<int64_t> strides = attributes.Ints("strides", {});
  const std::vector<int64_t> padding = attributes.Ints("padding", {0, 0});
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  if (x.rank() != 4) return OpError(call, "x must have rank 4, got " + x.ToString());
  StatusOr<ImageWindow> window = MakeImageWindow(x.dim(2), x.dim(3), kernel, "kernel",
                                                 strides.empty() ? kernel : strides, padding, {});
  if (!window.ok()) return OpError(call, window.status().message());
  return *window;
}

Shape PooledShape(const Shape& x, const ImageWindow& window) {
  return Shape({x.dim(0), x.dim(1), window.output[0], window.output[1]});
}

// Calls visit(y_index, taps) for every output element, with the row-major positions in x of
// its window's taps inside the input.
template <typename Visit>
void ForEachWindow(const Shape& x, const ImageWindow& win, Visit visit) {
  const Shape y = PooledShape(x, win);
  std::vector<int64_t> taps;
  for (int64_t n = 0; n < x.dim(0); ++n) {
    for (int64_t c = 0; c < x.dim(1); ++c) {
      for (int64_t oh = 0; oh < win.output[0]; ++oh) {
        for (int64_t ow = 0; ow < win.output[1]; ++ow) {
          taps.clear();
          for (int64_t kh = 0; kh < win.kernel[0]; ++kh) {
            const int64_t ih = oh * win.stride[0] - win.padding[0] + kh;
            if (ih < 0 || ih >= win.input[0]) continue;
            for (int64_t kw = 0; kw < win.kernel[1]; ++kw) {
              const int64_t iw = ow * win.stride[1] - win.padding[1] + kw;
              if (iw < 0 || iw >= win.input[1]) continue;
              taps.push_back(Ravel({n, c, ih, iw}, x));
            }
          }
          visit(Ravel({n, c, oh, ow}, y), taps);
        }
      }
    }
  }
}

// The first position of the largest value among `taps`.
int64_t ArgMax(const std::vector<double>& x, const std::vector<int64_t>& taps) {
  int64_t best = taps[0];
  for (int64_t tap : taps) {
    if (x[tap] > x[best]) best = tap;
  }
  return best;
}

Status MaxPool(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  const ReferenceTensor& x = Input(call, 0);
  SOFTWIRE_ASSIGN_OR_RETURN(ImageWindow window, ReadWindow(call, attributes, x.shape));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, PooledShape(x.shape, window)));
  std::vector<double>& y = Output(call, 0).values;
  ForEachWindow(x.shape, window, [&](int64_t yi, const std::vector<int64_t>& taps) {
    y[yi] = x.values[ArgMax(x.values, taps)];
  });
  return Status::Ok();
}

// (dy, x) -> dx.
Status MaxPoolGrad(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  const ReferenceTensor& x = Input(call, 1);
  SOFTWIRE_ASSIGN_OR_RETURN(ImageWindow window, ReadWindow(call, attributes, x.shape));
  if (Input(call, 0).shape != PooledShape(x.shape, window)) return OpError(call, "dy mis-shaped");
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
  const std::vector<double>& dy = Input(call, 0).values;
  std::vector<double>& dx = Output(call, 0).values;
  std::fill(dx.begin(), dx.end(), 0.0);
  ForEachWindow(x.shape, window, [&](int64_t yi, const std::vector<int64_t>& taps) {
    dx[ArgMax(x.values, taps)] += dy[yi];
  });
  return Status::Ok();
}

Status AvgPool(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  const ReferenceTensor& x = Input(call, 0);
  SOFTWIRE_ASSIGN_OR_RETURN(ImageWindow window, ReadWindow(call, attributes, x.shape));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, PooledShape(x.shape, window)));
  const double area = static_cast<double>(window.kernel[0] * window.kernel[1]);
  std::vector<double>& y = Output(call, 0).values;
  ForEachWindow(x.shape, window, [&](int64_t yi, const std::vector<int64_t>& taps) {
    double sum = 0;
    for (int64_t tap : taps) sum += x.values[tap];
    y[yi] = sum / area;
  });
  return Status::Ok();
}

// (dy) -> dx of shape `shape`.
Status AvgPoolGrad(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const Shape x(attributes.RequiredInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(ImageWindow window, ReadWindow(call, attributes, x));
  if (Input(call, 0).shape != PooledShape(x, window)) return OpError(call, "dy mis-shaped");
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x));
  const double area = static_cast<double>(window.kernel[0] * window.kernel[1]);
  const std::vector<double>& dy = Input(call, 0).values;
  std::vector<double>& dx = Output(call, 0).values;
  std::fill(dx.begin(), dx.end(), 0.0);
  ForEachWindow(x, window, [&](int64_t yi, const std::vector<int64_t>& taps) {
    for (int64_t tap : taps) dx[tap] += dy[yi] / area;
  });
  return Status::Ok();
}

// x [N, C, H, W] -> y [N, C], the mean of each plane.
Status GlobalAvgPool(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  const ReferenceTensor& x = Input(call, 0);
  if (x.shape.rank() != 4) return OpError(call, "x must have rank 4");
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, Shape({x.shape.dim(0), x.shape.dim(1)})));
  const int64_t plane = x.shape.dim(2) * x.shape.dim(3);
  std::vector<double>& y = Output(call, 0).values;
  for (size_t row = 0; row < y.size(); ++row) {
    double sum = 0;
    for (int64_t i = 0; i < plane; ++i) sum += x.values[row * plane + i];
    y[row] = sum / plane;
  }
  return Status::Ok();
}

Status GlobalAvgPoolGrad(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const Shape x(attributes.RequiredInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  if (x.rank() != 4 || Input(call, 0).shape != Shape({x.dim(0), x.dim(1)})) {
    return OpError(call, "dy must be [N, C] of shape [N, C, H, W]");
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x));
  const int64_t plane = x.dim(2) * x.dim(3);
  std::vector<double>& dx = Output(call, 0).values;
  for (int64_t i = 0; i < x.NumElements(); ++i) dx[i] = Input(call, 0).values[i / plane] / plane;
  return Status::Ok();
}

Status Flatten(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  const Shape& x = Input(call, 0).shape;
  if (x.rank() < 1) return OpError(call, "x must have rank >= 1");
  SOFTWIRE_RETURN_IF_ERROR(
      CheckOutputShape(call, 0, Shape({x.dim(0), x.NumElements(1, x.rank())})));
  Output(call, 0).values = Input(call, 0).values;
  return Status::Ok();
}

}  // namespace

void RegisterReferencePoolingKernels(ReferenceKernelTable* table) {
  table->Register("max_pool2d", MaxPool);
  table->Register("max_pool2d_grad", MaxPoolGrad);
  table->Register("avg_pool2d", AvgPool);
  table->Register("avg_pool2d_grad", AvgPoolGrad);
  table->Register("global_avg_pool", GlobalAvgPool);
  table->Register("global_avg_pool_grad", GlobalAvgPoolGrad);
  table->Register("flatten", Flatten);
}

}  // namespace reference
}  // namespace softwire
