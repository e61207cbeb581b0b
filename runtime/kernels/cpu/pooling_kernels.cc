// max_pool2d, avg_pool2d, global_avg_pool, their gradients, and flatten on NCHW images, by the
// definitions of docs/OPS.md (and reference/kernels/reference_pooling.cc): max pooling ignores
// padding, its gradient goes to the first maximum of each window (row-major); average pooling
// divides by the kernel's area, padding included.
//
// Plain loops, parallel over the N * C image planes: pooling reads and writes each element a
// few times, so memory, not arithmetic, bounds it, and planes are independent (the gradients
// write only their own plane of dx). Images may be in any layout of base/layout.h (all of one
// op's in the same): a plane's elements then lie `block` apart instead of next to each other,
// and each window is visited in the same order, so every layout gives the same values.
#include <algorithm>
#include <cstring>
#include <memory>

#include "base/image_window.h"
#include "base/layout.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bfloat16_access.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

enum class PoolOp { kMax, kMaxGrad, kAvg, kAvgGrad };

// x [N, C, H, W] and its window; y [N, C, OH, OW].
StatusOr<ImageWindow> ReadPoolWindow(const proto::KernelDef& def, const Shape& x) {
  KernelAttributes attributes(def);
  const std::vector<int64_t> kernel = attributes.RequiredInts("kernel");
  const std::vector<int64_t> strides = attributes.Ints("strides", {});
  const std::vector<int64_t> padding = attributes.Ints("padding", {0, 0});
  if (def.op_type() == "avg_pool2d_grad") attributes.RequiredInts("shape");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  if (x.rank() != 4) return KernelDefError(def, "x must have rank 4, got " + x.ToString());
  StatusOr<ImageWindow> window = MakeImageWindow(x.dim(2), x.dim(3), kernel, "kernel",
                                                 strides.empty() ? kernel : strides, padding, {});
  if (!window.ok()) return KernelDefError(def, window.status().message());
  return *window;
}

class PoolKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    const std::string& type = def.op_type();
    const PoolOp op = type == "max_pool2d"        ? PoolOp::kMax
                      : type == "max_pool2d_grad" ? PoolOp::kMaxGrad
                      : type == "avg_pool2d"      ? PoolOp::kAvg
                                                  : PoolOp::kAvgGrad;
    const DType f32 = DType::kFloat32;
    Shape x;
    if (op == PoolOp::kMax || op == PoolOp::kAvg) {
      SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x"}, {f32}, {"y"}, {f32}));
      x = ShapeOf(def.input(0));
    } else if (op == PoolOp::kMaxGrad) {
      SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"dy", "x"}, {f32, f32}, {"dx"}, {f32}));
      x = ShapeOf(def.input(1));
    } else {
      SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"dy"}, {f32}, {"dx"}, {f32}));
      x = ShapeOf(def.output(0));
    }
    SOFTWIRE_ASSIGN_OR_RETURN(ImageWindow window, ReadPoolWindow(def, x));
    const Shape y({x.dim(0), x.dim(1), window.output[0], window.output[1]});
    const bool forward = op == PoolOp::kMax || op == PoolOp::kAvg;
    SOFTWIRE_RETURN_IF_ERROR(forward ? CheckShape(def, "output y", ShapeOf(def.output(0)), y)
                                     : CheckShape(def, "input dy", ShapeOf(def.input(0)), y));
    if (!forward) SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dx", ShapeOf(def.output(0)), x));
    const Layout layout = LayoutOf(def.output(0));
    for (const proto::TensorDesc& desc : def.input()) {
      if (LayoutOf(desc) != layout) {
        return KernelDefError(def, "every image must be in one layout");
      }
    }
    if (!LayoutFits(layout, x) || !LayoutFits(layout, y)) {
      return KernelDefError(def, "x " + x.ToString() + " cannot be held in " + LayoutName(layout));
    }
    return std::unique_ptr<Kernel>(new PoolKernel(
        op, window, x.dim(0) * x.dim(1), ImageLayout::Of(layout, x), ImageLayout::Of(layout, y)));
  }

  Status Run(const KernelContext& context) override {
    const int64_t in_plane = window_.input[0] * window_.input[1];
    const int64_t out_plane = window_.output[0] * window_.output[1];
    const int64_t taps = window_.kernel[0] * window_.kernel[1];
    ParallelFor(context.parallel, planes_, MinChunkFor((out_plane * taps) + in_plane),
                [&](int64_t begin, int64_t end) {
                  for (int64_t plane = begin; plane < end; ++plane) {
                    const int64_t n = plane / in_.channels, c = plane % in_.channels;
                    RunPlane(context, in_.Offset(n, c, 0), out_.Offset(n, c, 0));
                  }
                });
    return Status::Ok();
  }

 private:
  PoolKernel(PoolOp op, const ImageWindow& window, int64_t planes, ImageLayout in, ImageLayout out)
      : op_(op), window_(window), planes_(planes), in_(in), out_(out) {}

  // One plane: x and dx start at `in`, y and dy at `out`, their elements `in_.block` apart.
  void RunPlane(const KernelContext& context, int64_t in, int64_t out) const {
    const ImageWindow& w = window_;
    const int64_t step = in_.block;
    const float inverse_area = 1.0f / static_cast<float>(w.kernel[0] * w.kernel[1]);
    const bool grad = op_ == PoolOp::kMaxGrad || op_ == PoolOp::kAvgGrad;
    const float* x = op_ == PoolOp::kMaxGrad ? context.inputs[1].As<float>() + in
                     : grad                  ? nullptr
                                             : context.inputs[0].As<float>() + in;
    const float* dy = grad ? context.inputs[0].As<float>() + out : nullptr;
    float* result = context.outputs[0].As<float>() + (grad ? in : out);
    if (grad) {
      for (int64_t i = 0; i < w.input[0] * w.input[1]; ++i) result[i * step] = 0.0f;
    }
    for (int64_t oh = 0; oh < w.output[0]; ++oh) {
      const int64_t h_begin = std::max<int64_t>(0, oh * w.stride[0] - w.padding[0]);
      const int64_t h_end = std::min(w.input[0], oh * w.stride[0] - w.padding[0] + w.kernel[0]);
      for (int64_t ow = 0; ow < w.output[1]; ++ow) {
        const int64_t w_begin = std::max<int64_t>(0, ow * w.stride[1] - w.padding[1]);
        const int64_t w_end = std::min(w.input[1], ow * w.stride[1] - w.padding[1] + w.kernel[1]);
        const int64_t o = (oh * w.output[1] + ow) * step;
        if (op_ == PoolOp::kAvgGrad) {
          const float share = dy[o] * inverse_area;
          for (int64_t ih = h_begin; ih < h_end; ++ih) {
            for (int64_t iw = w_begin; iw < w_end; ++iw) {
              result[(ih * w.input[1] + iw) * step] += share;
            }
          }
          continue;
        }
        if (op_ == PoolOp::kAvg) {
          float sum = 0.0f;
          for (int64_t ih = h_begin; ih < h_end; ++ih) {
            for (int64_t iw = w_begin; iw < w_end; ++iw) sum += x[(ih * w.input[1] + iw) * step];
          }
          result[o] = sum * inverse_area;
          continue;
        }
        int64_t best = (h_begin * w.input[1] + w_begin) * step;
        for (int64_t ih = h_begin; ih < h_end; ++ih) {
          for (int64_t iw = w_begin; iw < w_end; ++iw) {
            const int64_t i = (ih * w.input[1] + iw) * step;
            if (x[i] > x[best]) best = i;
          }
        }
        if (op_ == PoolOp::kMax) {
          result[o] = x[best];
        } else {
          result[best] += dy[o];
        }
      }
    }
  }

  const PoolOp op_;
  const ImageWindow window_;
  const int64_t planes_;   // N * C.
  const ImageLayout in_;   // Of x and dx.
  const ImageLayout out_;  // Of y and dy.
};

// global_avg_pool: x [N, C, H, W] -> y [N, C]; global_avg_pool_grad: dy [N, C] -> dx. The
// image (x or dx) may be in any layout of base/layout.h; each channel's sum runs over its H * W
// elements in the same order in all of them.
class GlobalAvgPoolKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    const bool grad = def.op_type() == "global_avg_pool_grad";
    KernelAttributes attributes(def);
    if (grad) attributes.RequiredInts("shape");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    const DType f32 = DType::kFloat32;
    // The forward pass reads float32 or bfloat16 images (activations kept in bf16 between
    // convolutions, docs/PRECISION.md), summing in float32; y is float32.
    const bool bfloat16 =
        !grad && def.input_size() == 1 && DTypeOf(def.input(0)) == DType::kBFloat16;
    const DType image = bfloat16 ? DType::kBFloat16 : f32;
    SOFTWIRE_RETURN_IF_ERROR(grad ? CheckSignature(def, {"dy"}, {f32}, {"dx"}, {f32})
                                  : CheckSignature(def, {"x"}, {image}, {"y"}, {f32}));
    const Shape x = ShapeOf(grad ? def.output(0) : def.input(0));
    if (x.rank() != 4) return KernelDefError(def, "x must have rank 4, got " + x.ToString());
    const Shape pooled({x.dim(0), x.dim(1)});
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, grad ? "input dy" : "output y",
                                        ShapeOf(grad ? def.input(0) : def.output(0)), pooled));
    const Layout layout = LayoutOf(grad ? def.output(0) : def.input(0));
    if (!LayoutFits(layout, x)) {
      return KernelDefError(def, "x " + x.ToString() + " cannot be held in " + LayoutName(layout));
    }
    return std::unique_ptr<Kernel>(new GlobalAvgPoolKernel(
        grad, bfloat16, pooled.NumElements(), x.dim(2) * x.dim(3), ImageLayout::Of(layout, x)));
  }

  Status Run(const KernelContext& context) override {
    return bfloat16_ ? RunTyped<BFloat16>(context) : RunTyped<float>(context);
  }

 private:
  template <typename T>
  Status RunTyped(const KernelContext& context) {
    const T* in = context.inputs[0].As<T>();
    float* out = context.outputs[0].As<float>();
    const float inverse = 1.0f / static_cast<float>(plane_);
    if (image_.block > 1) {
      const ImageLayout& l = image_;
      ParallelFor(context.parallel, l.batch, MinChunkFor(l.image), [&](int64_t begin, int64_t end) {
        for (int64_t n = begin; n < end; ++n) {
          const T* pooled = grad_ ? in + n * l.channels : nullptr;
          float* sums = grad_ ? nullptr : out + n * l.channels;
          if (!grad_) std::fill(sums, sums + l.channels, 0.0f);
          for (int64_t cb = 0; cb < l.channels / l.block; ++cb) {
            const int64_t base = n * l.image + cb * l.block_stride;
            for (int64_t s = 0; s < l.spatial; ++s) {
              for (int64_t ci = 0; ci < l.block; ++ci) {
                const int64_t c = cb * l.block + ci;
                if (grad_) {
                  out[base + s * l.block + ci] = Load(pooled[c]) * inverse;
                } else {
                  sums[c] += Load(in[base + s * l.block + ci]);
                }
              }
            }
          }
          if (!grad_) {
            for (int64_t c = 0; c < l.channels; ++c) sums[c] *= inverse;
          }
        }
      });
      return Status::Ok();
    }
    ParallelFor(context.parallel, planes_, MinChunkFor(plane_), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        if (grad_) {
          std::fill(out + p * plane_, out + (p + 1) * plane_, Load(in[p]) * inverse);
        } else {
          float sum = 0.0f;
          for (int64_t i = 0; i < plane_; ++i) sum += Load(in[p * plane_ + i]);
          out[p] = sum * inverse;
        }
      }
    });
    return Status::Ok();
  }

  GlobalAvgPoolKernel(bool grad, bool bfloat16, int64_t planes, int64_t plane, ImageLayout image)
      : grad_(grad), bfloat16_(bfloat16), planes_(planes), plane_(plane), image_(image) {}

  const bool grad_;
  const bool bfloat16_;  // x is bfloat16 (forward only).
  const int64_t planes_;
  const int64_t plane_;  // H * W.
  const ImageLayout image_;
};

// flatten: x [N, ...] -> y [N, rest], the same bytes.
class FlattenKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (def.input_size() != 1 || def.output_size() != 1) {
      return KernelDefError(def, "takes one input and one output");
    }
    const Shape x = ShapeOf(def.input(0));
    if (x.rank() < 1) return KernelDefError(def, "x must have rank >= 1");
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)),
                                        Shape({x.dim(0), x.NumElements(1, x.rank())})));
    if (DTypeOf(def.input(0)) != DTypeOf(def.output(0))) {
      return KernelDefError(def, "y must have x's dtype");
    }
    return std::unique_ptr<Kernel>(new FlattenKernel());
  }

  Status Run(const KernelContext& context) override {
    const TensorView& x = context.inputs[0];
    if (x.data != context.outputs[0].data) {
      std::memcpy(context.outputs[0].data, x.data, static_cast<size_t>(x.NumBytes()));
    }
    return Status::Ok();
  }
};

}  // namespace

void RegisterPoolingKernels(KernelRegistry* registry) {
  for (const char* type : {"max_pool2d", "max_pool2d_grad", "avg_pool2d", "avg_pool2d_grad"}) {
    registry->Register(type, PoolKernel::Create);
  }
  registry->Register("global_avg_pool", GlobalAvgPoolKernel::Create);
  registry->Register("global_avg_pool_grad", GlobalAvgPoolKernel::Create);
  registry->Register("flatten", FlattenKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
