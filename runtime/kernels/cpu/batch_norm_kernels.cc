// batch_norm and batch_norm_grad over every axis of x [N, C, ...] but the channels (axis 1),
// with the batch's statistics (docs/OPS.md).
//
// Parallel over channels: a channel's statistics, its outputs and its dgamma, dbeta depend on
// its own elements only. Sums accumulate in double: a channel holds N * H * W elements, often
// tens of thousands, where float32 sums would lose digits the tests against PyTorch see.
#include <cmath>
#include <memory>

#include "proto/kernel_attributes.h"
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
};

StatusOr<ChannelLayout> ReadChannelLayout(const proto::KernelDef& def, int x_input,
                                          const std::vector<int>& per_channel_inputs) {
  KernelAttributes attributes(def);
  ChannelLayout layout;
  layout.epsilon = static_cast<float>(attributes.Float("epsilon", 1e-5));
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  const Shape x = ShapeOf(def.input(x_input));
  if (x.rank() < 2 || x.NumElements() == 0) {
    return KernelDefError(def, "x must be [N, C, ...] and not empty, got " + x.ToString());
  }
  layout.batch = x.dim(0);
  layout.channels = x.dim(1);
  layout.spatial = x.NumElements(2, x.rank());
  for (int input : per_channel_inputs) {
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input " + std::to_string(input),
                                        ShapeOf(def.input(input)), Shape({layout.channels})));
  }
  return layout;
}

struct Statistics {
  float mean = 0;
  float rstd = 0;
};

Statistics ChannelStatistics(const ChannelLayout& layout, const float* x, int64_t c) {
  double sum = 0;
  for (int64_t n = 0; n < layout.batch; ++n) {
    const float* row = x + (n * layout.channels + c) * layout.spatial;
    for (int64_t s = 0; s < layout.spatial; ++s) sum += row[s];
  }
  const double count = static_cast<double>(layout.batch * layout.spatial);
  const double mean = sum / count;
  double squares = 0;
  for (int64_t n = 0; n < layout.batch; ++n) {
    const float* row = x + (n * layout.channels + c) * layout.spatial;
    for (int64_t s = 0; s < layout.spatial; ++s) squares += (row[s] - mean) * (row[s] - mean);
  }
  return {static_cast<float>(mean),
          static_cast<float>(1.0 / std::sqrt(squares / count + layout.epsilon))};
}

int64_t MinChannels(const ChannelLayout& layout, int64_t work_per_element) {
  return MinChunkFor(work_per_element * layout.batch * layout.spatial);
}

class BatchNormKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    const DType f32 = DType::kFloat32;
    SOFTWIRE_RETURN_IF_ERROR(
        CheckSignature(def, {"x", "gamma", "beta"}, {f32, f32, f32}, {"y"}, {f32}));
    SOFTWIRE_ASSIGN_OR_RETURN(ChannelLayout layout, ReadChannelLayout(def, 0, {1, 2}));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, "output y", ShapeOf(def.output(0)), ShapeOf(def.input(0))));
    return std::unique_ptr<Kernel>(new BatchNormKernel(layout));
  }

  Status Run(const KernelContext& context) override {
    const float* x = context.inputs[0].As<float>();
    const float* gamma = context.inputs[1].As<float>();
    const float* beta = context.inputs[2].As<float>();
    float* y = context.outputs[0].As<float>();
    const ChannelLayout& l = layout_;
    ParallelFor(context.parallel, l.channels, MinChannels(l, 4), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const Statistics statistics = ChannelStatistics(l, x, c);
        const float scale = statistics.rstd * gamma[c];
        for (int64_t n = 0; n < l.batch; ++n) {
          const int64_t offset = (n * l.channels + c) * l.spatial;
          for (int64_t s = 0; s < l.spatial; ++s) {
            y[offset + s] = (x[offset + s] - statistics.mean) * scale + beta[c];
          }
        }
      }
    });
    return Status::Ok();
  }

 private:
  explicit BatchNormKernel(ChannelLayout layout) : layout_(layout) {}
  const ChannelLayout layout_;
};

// dx = rstd (g - mean(g) - xhat mean(g xhat)) with g = dy gamma; dgamma = sum dy xhat,
// dbeta = sum dy.
class BatchNormGradKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    const DType f32 = DType::kFloat32;
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"dy", "x", "gamma"}, {f32, f32, f32},
                                            {"dx", "dgamma", "dbeta"}, {f32, f32, f32}));
    SOFTWIRE_ASSIGN_OR_RETURN(ChannelLayout layout, ReadChannelLayout(def, 1, {2}));
    const Shape x = ShapeOf(def.input(1));
    const Shape channels({layout.channels});
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input dy", ShapeOf(def.input(0)), x));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dx", ShapeOf(def.output(0)), x));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dgamma", ShapeOf(def.output(1)), channels));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dbeta", ShapeOf(def.output(2)), channels));
    return std::unique_ptr<Kernel>(new BatchNormGradKernel(layout));
  }

  Status Run(const KernelContext& context) override {
    const float* dy = context.inputs[0].As<float>();
    const float* x = context.inputs[1].As<float>();
    const float* gamma = context.inputs[2].As<float>();
    float* dx = context.outputs[0].As<float>();
    float* dgamma = context.outputs[1].As<float>();
    float* dbeta = context.outputs[2].As<float>();
    const ChannelLayout& l = layout_;
    const double count = static_cast<double>(l.batch * l.spatial);
    ParallelFor(context.parallel, l.channels, MinChannels(l, 8), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const Statistics st = ChannelStatistics(l, x, c);
        double dy_xhat = 0, dy_sum = 0;
        for (int64_t n = 0; n < l.batch; ++n) {
          const int64_t offset = (n * l.channels + c) * l.spatial;
          for (int64_t s = 0; s < l.spatial; ++s) {
            dy_xhat += dy[offset + s] * ((x[offset + s] - st.mean) * st.rstd);
            dy_sum += dy[offset + s];
          }
        }
        dgamma[c] = static_cast<float>(dy_xhat);
        dbeta[c] = static_cast<float>(dy_sum);
        const float g_mean = static_cast<float>(gamma[c] * dy_sum / count);
        const float g_xhat_mean = static_cast<float>(gamma[c] * dy_xhat / count);
        for (int64_t n = 0; n < l.batch; ++n) {
          const int64_t offset = (n * l.channels + c) * l.spatial;
          for (int64_t s = 0; s < l.spatial; ++s) {
            const float xhat = (x[offset + s] - st.mean) * st.rstd;
            dx[offset + s] = st.rstd * (dy[offset + s] * gamma[c] - g_mean - xhat * g_xhat_mean);
          }
        }
      }
    });
    return Status::Ok();
  }

 private:
  explicit BatchNormGradKernel(ChannelLayout layout) : layout_(layout) {}
  const ChannelLayout layout_;
};

}  // namespace

void RegisterBatchNormKernels(KernelRegistry* registry) {
  registry->Register("batch_norm", BatchNormKernel::Create);
  registry->Register("batch_norm_grad", BatchNormGradKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
