// batch_norm and batch_norm_grad over every axis of x [N, C, ...] but the channels (axis 1),
// with the batch's statistics (docs/OPS.md).
//
// Plain x: parallel over channels: a channel's statistics, its outputs and its dgamma, dbeta
// depend on its own elements only. Sums accumulate in double: a channel holds N * H * W
// elements, often tens of thousands, where float32 sums would lose digits the tests against
// PyTorch see. The statistics loop is channel_moments.h's, shared by batch_norm,
// batch_norm_grad and batch_norm_statistics.
//
// x in NHWC or nChw16c (base/layout.h, docs/LAYOUTS.md; dy, dx and y in the same layout): a
// channel's elements are strided there, so the loops run over images instead, in memory order,
// each image summing into per-image per-channel partial sums (double) that are then added in
// image order: the same sums whatever the threads. The element-wise passes run over images too.
//
// x, dy, y and dx may be bfloat16 (docs/PRECISION.md, activations kept in bf16 between
// convolutions), all of one type: each element is widened as it is read, the arithmetic is the
// float32 path's, and y and dx are rounded once as they are stored; gamma, beta, the
// statistics, dgamma and dbeta stay float32.
#include <cmath>
#include <memory>
#include <vector>

#include "base/layout.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bfloat16_access.h"
#include "runtime/kernels/cpu/channel_moments.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

// x viewed as [N, C, S].
struct ChannelLayout {
  float epsilon = 0;
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t spatial = 0;
  bool blocked = false;  // x is not plain: `image` says where its elements lie.
  ImageLayout image;
};

StatusOr<ChannelLayout> ReadChannelLayout(const proto::KernelDef& def, int x_input,
                                          const std::vector<int>& per_channel_inputs) {
  KernelAttributes attributes(def);
  ChannelLayout layout;
  layout.epsilon = static_cast<float>(attributes.Float("epsilon", 1e-5));
  if (def.op_type() == "batch_norm") {  // Checked by the kernel itself.
    attributes.Float("momentum", 0.1);
    attributes.Bool("use_running_statistics", false);
  }
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  const Shape x = ShapeOf(def.input(x_input));
  if (x.rank() < 2 || x.NumElements() == 0) {
    return KernelDefError(def, "x must be [N, C, ...] and not empty, got " + x.ToString());
  }
  layout.batch = x.dim(0);
  layout.channels = x.dim(1);
  layout.spatial = x.NumElements(2, x.rank());
  const Layout memory = LayoutOf(def.input(x_input));
  if (!LayoutFits(memory, x)) {
    return KernelDefError(def, "x " + x.ToString() + " cannot be held in " + LayoutName(memory));
  }
  for (const proto::TensorDesc& desc : def.input()) {
    if (desc.dims_size() == x.rank() && LayoutOf(desc) != memory) {
      return KernelDefError(def, "every image input and output must be in x's layout");
    }
  }
  for (const proto::TensorDesc& desc : def.output()) {
    if (desc.dims_size() == x.rank() && LayoutOf(desc) != memory) {
      return KernelDefError(def, "every image input and output must be in x's layout");
    }
  }
  layout.blocked = memory != Layout::kPlain;
  layout.image = ImageLayout::Of(memory, x);
  for (int input : per_channel_inputs) {
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input " + std::to_string(input),
                                        ShapeOf(def.input(input)), Shape({layout.channels})));
  }
  return layout;
}

// The type of the image operands: input `index`'s, float32 or bfloat16.
StatusOr<DType> ImageDType(const proto::KernelDef& def, int index) {
  if (def.input_size() <= index) return KernelDefError(def, "has too few inputs");
  const DType dtype = DTypeOf(def.input(index));
  if (dtype != DType::kFloat32 && dtype != DType::kBFloat16) {
    return KernelDefError(
        def, std::string("images must be float32 or bfloat16, not ") + DTypeName(dtype));
  }
  return dtype;
}

struct Statistics {
  float mean = 0;
  float rstd = 0;
};

PlainChannels PlainChannelsOf(const ChannelLayout& layout) {
  return {layout.batch, layout.channels, layout.spatial};
}

template <typename T>
Statistics ChannelStatistics(const ChannelLayout& layout, const T* x, int64_t c) {
  const ChannelMoments moments = ComputeChannelMoments(PlainChannelsOf(layout), x, c);
  return {static_cast<float>(moments.mean),
          static_cast<float>(
              1.0 / std::sqrt(moments.squared_deviations / moments.count + layout.epsilon))};
}

int64_t MinChannels(const ChannelLayout& layout, int64_t work_per_element) {
  return MinChunkFor(work_per_element * layout.batch * layout.spatial);
}

// The loops over an image batch in a channel-blocked layout (NHWC, nChw16c): per image, in
// memory order, with the channel of every element known. Owns the per-image partial sums, so
// Run allocates nothing.
class BlockedLoops {
 public:
  explicit BlockedLoops(const ChannelLayout& layout)
      : l_(layout.image),
        partial_(static_cast<size_t>(l_.batch * l_.channels * 2)),
        sums_(static_cast<size_t>(2 * l_.channels)),
        means_(static_cast<size_t>(l_.channels)),
        epsilon_(layout.epsilon) {}

  // body(offset, c) for every element of image n.
  template <typename Body>
  void ForImage(int64_t n, const Body& body) const {
    const int64_t block = l_.block;
    for (int64_t cb = 0; cb < l_.channels / block; ++cb) {
      const int64_t base = n * l_.image + cb * l_.block_stride;
      for (int64_t s = 0; s < l_.spatial; ++s) {
        const int64_t offset = base + s * block;
        for (int64_t ci = 0; ci < block; ++ci) body(offset + ci, cb * block + ci);
      }
    }
  }

  // Per channel, the sums over the batch of first(offset, c) and second(offset, c) (second may
  // return 0): per-image partial sums in parallel, then added in image order.
  template <typename First, typename Second>
  void Sums(ParallelRunner* parallel, const First& first, const Second& second, double* first_sum,
            double* second_sum) {
    const int64_t channels = l_.channels;
    ParallelFor(parallel, l_.batch, MinChunkFor(2 * l_.image), [&](int64_t begin, int64_t end) {
      for (int64_t n = begin; n < end; ++n) {
        double* a = partial_.data() + n * channels * 2;
        double* b = a + channels;
        std::fill(a, a + 2 * channels, 0.0);
        ForImage(n, [&](int64_t offset, int64_t c) {
          a[c] += first(offset, c);
          b[c] += second(offset, c);
        });
      }
    });
    for (int64_t c = 0; c < channels; ++c) first_sum[c] = second_sum[c] = 0;
    for (int64_t n = 0; n < l_.batch; ++n) {
      const double* a = partial_.data() + n * channels * 2;
      for (int64_t c = 0; c < channels; ++c) {
        first_sum[c] += a[c];
        second_sum[c] += a[channels + c];
      }
    }
  }

  // The batch's mean and rstd per channel (two passes, as ChannelStatistics), and the sum of
  // squared deviations in `squares`.
  template <typename T>
  void Statistics(ParallelRunner* parallel, const T* x, float* mean, float* rstd, double* squares) {
    std::vector<double>& sums = sums_;
    const double count = static_cast<double>(l_.batch * l_.spatial);
    Sums(
        parallel, [&](int64_t offset, int64_t) { return static_cast<double>(Load(x[offset])); },
        [](int64_t, int64_t) { return 0.0; }, sums.data(), sums.data() + l_.channels);
    std::vector<double>& means = means_;
    for (int64_t c = 0; c < l_.channels; ++c) means[c] = sums[c] / count;
    Sums(
        parallel,
        [&](int64_t offset, int64_t c) {
          const double d = Load(x[offset]) - means[c];
          return d * d;
        },
        [](int64_t, int64_t) { return 0.0; }, squares, sums.data() + l_.channels);
    for (int64_t c = 0; c < l_.channels; ++c) {
      mean[c] = static_cast<float>(means[c]);
      if (rstd != nullptr) {
        rstd[c] = static_cast<float>(1.0 / std::sqrt(squares[c] / count + epsilon_));
      }
    }
  }

  // body(offset, c) over every element, parallel over images.
  template <typename Body>
  void ForAll(ParallelRunner* parallel, int64_t work_per_element, const Body& body) const {
    ParallelFor(parallel, l_.batch, MinChunkFor(work_per_element * l_.image),
                [&](int64_t begin, int64_t end) {
                  for (int64_t n = begin; n < end; ++n) ForImage(n, body);
                });
  }

  const ImageLayout& layout() const { return l_; }

 private:
  const ImageLayout l_;
  std::vector<double> partial_;  // [N][2][C].
  std::vector<double> sums_;
  std::vector<double> means_;
  const float epsilon_;
};

// What the blocked path of a kernel keeps between firings: its loops and per-channel values.
struct BlockedState {
  explicit BlockedState(const ChannelLayout& layout)
      : loops(layout),
        mean(static_cast<size_t>(layout.channels)),
        rstd(mean.size()),
        scale(mean.size()),
        shift(mean.size()),
        first(mean.size()),
        second(mean.size()) {}
  BlockedLoops loops;
  std::vector<float> mean, rstd, scale, shift;
  std::vector<double> first, second;
};

// (x, gamma, beta[, running_mean, running_var]) -> y; with use_running_statistics the running
// statistics replace the batch's.
class BatchNormKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    const DType f32 = DType::kFloat32;
    SOFTWIRE_ASSIGN_OR_RETURN(const DType image, ImageDType(def, 0));
    const bool running = def.input_size() == 5;
    SOFTWIRE_RETURN_IF_ERROR(
        running ? CheckSignature(def, {"x", "gamma", "beta", "running_mean", "running_var"},
                                 {image, f32, f32, f32, f32}, {"y"}, {image})
                : CheckSignature(def, {"x", "gamma", "beta"}, {image, f32, f32}, {"y"}, {image}));
    KernelAttributes attributes(def);
    const bool use_running = attributes.Bool("use_running_statistics", false);
    attributes.Float("momentum", 0.1);  // Read by the running updates, not here.
    attributes.Float("epsilon", 1e-5);  // Read by ReadChannelLayout.
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (use_running && !running) {
      return KernelDefError(def, "use_running_statistics needs running_mean and running_var");
    }
    SOFTWIRE_ASSIGN_OR_RETURN(
        ChannelLayout layout,
        ReadChannelLayout(def, 0, running ? std::vector<int>{1, 2, 3, 4} : std::vector<int>{1, 2}));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, "output y", ShapeOf(def.output(0)), ShapeOf(def.input(0))));
    return std::unique_ptr<Kernel>(
        new BatchNormKernel(layout, use_running, image == DType::kBFloat16));
  }

  Status Run(const KernelContext& context) override {
    return bfloat16_ ? RunTyped<BFloat16>(context) : RunTyped<float>(context);
  }

 private:
  template <typename T>
  Status RunTyped(const KernelContext& context) {
    const T* x = context.inputs[0].As<T>();
    const float* gamma = context.inputs[1].As<float>();
    const float* beta = context.inputs[2].As<float>();
    const float* running_mean = use_running_ ? context.inputs[3].As<float>() : nullptr;
    const float* running_var = use_running_ ? context.inputs[4].As<float>() : nullptr;
    T* y = context.outputs[0].As<T>();
    const ChannelLayout& l = layout_;
    if (blocked_ != nullptr) {
      BlockedState& b = *blocked_;
      if (use_running_) {
        for (int64_t c = 0; c < l.channels; ++c) {
          b.mean[c] = running_mean[c];
          b.rstd[c] = 1.0f / std::sqrt(running_var[c] + l.epsilon);
        }
      } else {
        b.loops.Statistics(context.parallel, x, b.mean.data(), b.rstd.data(), b.first.data());
      }
      for (int64_t c = 0; c < l.channels; ++c) b.scale[c] = b.rstd[c] * gamma[c];
      const float* mean = b.mean.data();
      const float* scale = b.scale.data();
      b.loops.ForAll(context.parallel, 4, [&](int64_t offset, int64_t c) {
        Store(y + offset, (Load(x[offset]) - mean[c]) * scale[c] + beta[c]);
      });
      return Status::Ok();
    }
    ParallelFor(context.parallel, l.channels, MinChannels(l, 4), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const Statistics statistics =
            use_running_ ? Statistics{running_mean[c], 1.0f / std::sqrt(running_var[c] + l.epsilon)}
                         : ChannelStatistics(l, x, c);
        const float scale = statistics.rstd * gamma[c];
        for (int64_t n = 0; n < l.batch; ++n) {
          const int64_t offset = (n * l.channels + c) * l.spatial;
          for (int64_t s = 0; s < l.spatial; ++s) {
            Store(y + offset + s, (Load(x[offset + s]) - statistics.mean) * scale + beta[c]);
          }
        }
      }
    });
    return Status::Ok();
  }

  BatchNormKernel(ChannelLayout layout, bool use_running, bool bfloat16)
      : layout_(layout),
        use_running_(use_running),
        bfloat16_(bfloat16),
        blocked_(layout.blocked ? std::make_unique<BlockedState>(layout) : nullptr) {}
  const ChannelLayout layout_;
  const bool use_running_;
  const bool bfloat16_;
  std::unique_ptr<BlockedState> blocked_;
};

// dx = rstd (g - mean(g) - xhat mean(g xhat)) with g = dy gamma; dgamma = sum dy xhat,
// dbeta = sum dy.
class BatchNormGradKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    const DType f32 = DType::kFloat32;
    SOFTWIRE_ASSIGN_OR_RETURN(const DType image, ImageDType(def, 0));
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"dy", "x", "gamma"}, {image, image, f32},
                                            {"dx", "dgamma", "dbeta"}, {image, f32, f32}));
    SOFTWIRE_ASSIGN_OR_RETURN(ChannelLayout layout, ReadChannelLayout(def, 1, {2}));
    const Shape x = ShapeOf(def.input(1));
    const Shape channels({layout.channels});
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input dy", ShapeOf(def.input(0)), x));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dx", ShapeOf(def.output(0)), x));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dgamma", ShapeOf(def.output(1)), channels));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dbeta", ShapeOf(def.output(2)), channels));
    return std::unique_ptr<Kernel>(new BatchNormGradKernel(layout, image == DType::kBFloat16));
  }

  Status Run(const KernelContext& context) override {
    return bfloat16_ ? RunTyped<BFloat16>(context) : RunTyped<float>(context);
  }

 private:
  template <typename T>
  Status RunTyped(const KernelContext& context) {
    const T* dy = context.inputs[0].As<T>();
    const T* x = context.inputs[1].As<T>();
    const float* gamma = context.inputs[2].As<float>();
    T* dx = context.outputs[0].As<T>();
    float* dgamma = context.outputs[1].As<float>();
    float* dbeta = context.outputs[2].As<float>();
    const ChannelLayout& l = layout_;
    const double count = static_cast<double>(l.batch * l.spatial);
    if (blocked_ != nullptr) {
      BlockedState& b = *blocked_;
      b.loops.Statistics(context.parallel, x, b.mean.data(), b.rstd.data(), b.first.data());
      const float* mean = b.mean.data();
      const float* rstd = b.rstd.data();
      b.loops.Sums(
          context.parallel,
          [&](int64_t o, int64_t c) {
            return static_cast<double>(Load(dy[o]) * ((Load(x[o]) - mean[c]) * rstd[c]));
          },
          [&](int64_t o, int64_t) { return static_cast<double>(Load(dy[o])); }, b.first.data(),
          b.second.data());
      for (int64_t c = 0; c < l.channels; ++c) {
        dgamma[c] = static_cast<float>(b.first[c]);
        dbeta[c] = static_cast<float>(b.second[c]);
        b.scale[c] = static_cast<float>(gamma[c] * b.second[c] / count);  // g_mean.
        b.shift[c] = static_cast<float>(gamma[c] * b.first[c] / count);   // g_xhat_mean.
      }
      const float* g_mean = b.scale.data();
      const float* g_xhat_mean = b.shift.data();
      b.loops.ForAll(context.parallel, 8, [&](int64_t o, int64_t c) {
        const float xhat = (Load(x[o]) - mean[c]) * rstd[c];
        Store(dx + o, rstd[c] * (Load(dy[o]) * gamma[c] - g_mean[c] - xhat * g_xhat_mean[c]));
      });
      return Status::Ok();
    }
    ParallelFor(context.parallel, l.channels, MinChannels(l, 8), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const Statistics st = ChannelStatistics(l, x, c);
        double dy_xhat = 0, dy_sum = 0;
        for (int64_t n = 0; n < l.batch; ++n) {
          const int64_t offset = (n * l.channels + c) * l.spatial;
          for (int64_t s = 0; s < l.spatial; ++s) {
            const float g = Load(dy[offset + s]);
            dy_xhat += g * ((Load(x[offset + s]) - st.mean) * st.rstd);
            dy_sum += g;
          }
        }
        dgamma[c] = static_cast<float>(dy_xhat);
        dbeta[c] = static_cast<float>(dy_sum);
        const float g_mean = static_cast<float>(gamma[c] * dy_sum / count);
        const float g_xhat_mean = static_cast<float>(gamma[c] * dy_xhat / count);
        for (int64_t n = 0; n < l.batch; ++n) {
          const int64_t offset = (n * l.channels + c) * l.spatial;
          for (int64_t s = 0; s < l.spatial; ++s) {
            const float xhat = (Load(x[offset + s]) - st.mean) * st.rstd;
            Store(dx + offset + s,
                  st.rstd * (Load(dy[offset + s]) * gamma[c] - g_mean - xhat * g_xhat_mean));
          }
        }
      }
    });
    return Status::Ok();
  }

  BatchNormGradKernel(ChannelLayout layout, bool bfloat16)
      : layout_(layout),
        bfloat16_(bfloat16),
        blocked_(layout.blocked ? std::make_unique<BlockedState>(layout) : nullptr) {}
  const ChannelLayout layout_;
  const bool bfloat16_;
  std::unique_ptr<BlockedState> blocked_;
};

// x [N, C, ...] -> (mean, var) [C], var unbiased (count - 1; 0 for a count of 1).
class BatchNormStatisticsKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    const DType f32 = DType::kFloat32;
    SOFTWIRE_ASSIGN_OR_RETURN(const DType image, ImageDType(def, 0));
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x"}, {image}, {"mean", "var"}, {f32, f32}));
    SOFTWIRE_ASSIGN_OR_RETURN(ChannelLayout layout, ReadChannelLayout(def, 0, {}));
    const Shape channels({layout.channels});
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output mean", ShapeOf(def.output(0)), channels));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output var", ShapeOf(def.output(1)), channels));
    return std::unique_ptr<Kernel>(
        new BatchNormStatisticsKernel(layout, image == DType::kBFloat16));
  }

  Status Run(const KernelContext& context) override {
    return bfloat16_ ? RunTyped<BFloat16>(context) : RunTyped<float>(context);
  }

 private:
  template <typename T>
  Status RunTyped(const KernelContext& context) {
    const T* x = context.inputs[0].As<T>();
    float* mean = context.outputs[0].As<float>();
    float* var = context.outputs[1].As<float>();
    const ChannelLayout& l = layout_;
    const double count = static_cast<double>(l.batch * l.spatial);
    if (blocked_ != nullptr) {
      BlockedState& b = *blocked_;
      b.loops.Statistics(context.parallel, x, mean, nullptr, b.first.data());
      for (int64_t c = 0; c < l.channels; ++c) {
        var[c] = static_cast<float>(count > 1 ? b.first[c] / (count - 1) : 0.0);
      }
      return Status::Ok();
    }
    ParallelFor(context.parallel, l.channels, MinChannels(l, 3), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const ChannelMoments moments = ComputeChannelMoments(PlainChannelsOf(l), x, c);
        mean[c] = static_cast<float>(moments.mean);
        var[c] = static_cast<float>(count > 1 ? moments.squared_deviations / (count - 1) : 0.0);
      }
    });
    return Status::Ok();
  }

  BatchNormStatisticsKernel(ChannelLayout layout, bool bfloat16)
      : layout_(layout),
        bfloat16_(bfloat16),
        blocked_(layout.blocked ? std::make_unique<BlockedState>(layout) : nullptr) {}
  const ChannelLayout layout_;
  const bool bfloat16_;
  std::unique_ptr<BlockedState> blocked_;
};

// (statistic, running): running = (1 - momentum) running + momentum * scale * statistic, in
// place, once per step.
class RunningAverageUpdateKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    const DType f32 = DType::kFloat32;
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"statistic", "running"}, {f32, f32}, {}, {}));
    KernelAttributes attributes(def);
    const float momentum = static_cast<float>(attributes.RequiredFloat("momentum"));
    const float scale = static_cast<float>(attributes.Float("scale", 1.0));
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    const Shape running = ShapeOf(def.input(1));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input statistic", ShapeOf(def.input(0)), running));
    return std::unique_ptr<Kernel>(
        new RunningAverageUpdateKernel(momentum, scale, running.NumElements()));
  }

  Status Run(const KernelContext& context) override {
    const float* statistic = context.inputs[0].As<float>();
    float* running = context.inputs[1].As<float>();
    for (int64_t i = 0; i < elements_; ++i) {
      running[i] = (1.0f - momentum_) * running[i] + momentum_ * (scale_ * statistic[i]);
    }
    return Status::Ok();
  }

 private:
  RunningAverageUpdateKernel(float momentum, float scale, int64_t elements)
      : momentum_(momentum), scale_(scale), elements_(elements) {}
  const float momentum_;
  const float scale_;
  const int64_t elements_;
};

}  // namespace

void RegisterBatchNormKernels(KernelRegistry* registry) {
  registry->Register("batch_norm", BatchNormKernel::Create);
  registry->Register("batch_norm_grad", BatchNormGradKernel::Create);
  registry->Register("batch_norm_statistics", BatchNormStatisticsKernel::Create);
  registry->Register("running_average_update", RunningAverageUpdateKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
