// layer_norm and layer_norm_grad over the last axis of x [..., C].
//
// Statistics: mean first, then the variance as the mean squared deviation from it (two passes:
// no cancellation when |mean| >> stddev), both with vector_math.h's 16-lane sums.
//
// Parallelism: layer_norm over rows. layer_norm_grad has row-wise outputs (dx) and column-wise
// ones (dgamma, dbeta); without a workspace (docs/OPS.md) it runs three passes:
//   1. rows:    write xhat into dx, which serves as scratch;
//   2. columns: dgamma[c] = sum_r dy * xhat, dbeta[c] = sum_r dy; each thread owns its columns;
//   3. rows:    recompute the row statistics and overwrite dx with the gradient.
#include <cmath>
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"
#include "runtime/kernels/cpu/vector_math.h"

namespace softwire {
namespace runtime {
namespace {

struct RowStatistics {
  float mean = 0;
  float rstd = 0;  // 1 / sqrt(var + epsilon).
};

RowStatistics ComputeRowStatistics(const float* x, int64_t channels, float epsilon) {
  RowStatistics statistics;
  const float inverse_channels = 1.0f / static_cast<float>(channels);
  statistics.mean = RowSum(x, channels) * inverse_channels;
  const float variance = RowSumSquaredDeviations(x, channels, statistics.mean) * inverse_channels;
  statistics.rstd = 1.0f / std::sqrt(variance + epsilon);
  return statistics;
}

// Reads epsilon and checks x [..., C] with gamma [C] (and beta [C] for the forward op).
struct LayerNormShape {
  float epsilon = 0;
  int64_t rows = 0;
  int64_t channels = 0;
};

StatusOr<LayerNormShape> ReadLayerNormShape(const proto::KernelDef& def, int x_input,
                                            const std::vector<int>& per_channel_inputs) {
  KernelAttributes attributes(def);
  LayerNormShape shape;
  shape.epsilon = static_cast<float>(attributes.Float("epsilon", 1e-5));
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  Shape x = ShapeOf(def.input(x_input));
  if (x.rank() < 1) return KernelDefError(def, "x must have rank >= 1, not []");
  shape.channels = x.dim(-1);
  shape.rows = x.NumElements(0, x.rank() - 1);
  if (shape.channels == 0) return KernelDefError(def, "x has no channels: " + x.ToString());
  for (int input : per_channel_inputs) {
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input " + std::to_string(input),
                                        ShapeOf(def.input(input)), Shape({shape.channels})));
  }
  return shape;
}

class LayerNormKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x", "gamma", "beta"},
                                            {DType::kFloat32, DType::kFloat32, DType::kFloat32},
                                            {"y"}, {DType::kFloat32}));
    SOFTWIRE_ASSIGN_OR_RETURN(LayerNormShape shape, ReadLayerNormShape(def, 0, {1, 2}));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, "output y", ShapeOf(def.output(0)), ShapeOf(def.input(0))));
    return std::unique_ptr<Kernel>(new LayerNormKernel(shape));
  }

  Status Run(const KernelContext& context) override {
    const float* x = context.inputs[0].As<float>();
    const float* gamma = context.inputs[1].As<float>();
    const float* beta = context.inputs[2].As<float>();
    float* y = context.outputs[0].As<float>();
    const int64_t channels = shape_.channels;
    ParallelFor(
        context.parallel, shape_.rows, MinChunkFor(4 * channels), [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const float* x_row = x + row * channels;
            float* y_row = y + row * channels;
            RowStatistics statistics = ComputeRowStatistics(x_row, channels, shape_.epsilon);
            for (int64_t c = 0; c < channels; ++c) {
              y_row[c] = (x_row[c] - statistics.mean) * statistics.rstd * gamma[c] + beta[c];
            }
          }
        });
    return Status::Ok();
  }

 private:
  explicit LayerNormKernel(LayerNormShape shape) : shape_(shape) {}

  const LayerNormShape shape_;
};

class LayerNormGradKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(
        def, {"dy", "x", "gamma"}, {DType::kFloat32, DType::kFloat32, DType::kFloat32},
        {"dx", "dgamma", "dbeta"}, {DType::kFloat32, DType::kFloat32, DType::kFloat32}));
    SOFTWIRE_ASSIGN_OR_RETURN(LayerNormShape shape, ReadLayerNormShape(def, 1, {2}));
    Shape x = ShapeOf(def.input(1));
    Shape channels({shape.channels});
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input dy", ShapeOf(def.input(0)), x));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dx", ShapeOf(def.output(0)), x));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dgamma", ShapeOf(def.output(1)), channels));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dbeta", ShapeOf(def.output(2)), channels));
    return std::unique_ptr<Kernel>(new LayerNormGradKernel(shape));
  }

  Status Run(const KernelContext& context) override {
    const float* dy = context.inputs[0].As<float>();
    const float* x = context.inputs[1].As<float>();
    const float* gamma = context.inputs[2].As<float>();
    float* dx = context.outputs[0].As<float>();
    float* dgamma = context.outputs[1].As<float>();
    float* dbeta = context.outputs[2].As<float>();
    WriteNormalizedInput(context.parallel, x, dx);
    SumOverRows(context.parallel, dy, dx, dgamma, dbeta);
    WriteInputGradient(context.parallel, dy, x, gamma, dx);
    return Status::Ok();
  }

 private:
  explicit LayerNormGradKernel(LayerNormShape shape) : shape_(shape) {}

  // Pass 1: xhat = (x - mean) * rstd into `xhat`.
  void WriteNormalizedInput(ParallelRunner* parallel, const float* x, float* xhat) const {
    const int64_t channels = shape_.channels;
    ParallelFor(parallel, shape_.rows, MinChunkFor(3 * channels), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const float* x_row = x + row * channels;
        float* xhat_row = xhat + row * channels;
        RowStatistics statistics = ComputeRowStatistics(x_row, channels, shape_.epsilon);
        for (int64_t c = 0; c < channels; ++c) {
          xhat_row[c] = (x_row[c] - statistics.mean) * statistics.rstd;
        }
      }
    });
  }

  // Pass 2: dgamma = sum over rows of dy * xhat, dbeta = sum over rows of dy.
  void SumOverRows(ParallelRunner* parallel, const float* dy, const float* xhat, float* dgamma,
                   float* dbeta) const {
    const int64_t channels = shape_.channels;
    const int64_t rows = shape_.rows;
    ParallelFor(parallel, channels, MinChunkFor(2 * rows), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        dgamma[c] = 0.0f;
        dbeta[c] = 0.0f;
      }
      for (int64_t row = 0; row < rows; ++row) {
        const float* dy_row = dy + row * channels;
        const float* xhat_row = xhat + row * channels;
        for (int64_t c = begin; c < end; ++c) {
          dgamma[c] += dy_row[c] * xhat_row[c];
          dbeta[c] += dy_row[c];
        }
      }
    });
  }

  // Pass 3: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma.
  void WriteInputGradient(ParallelRunner* parallel, const float* dy, const float* x,
                          const float* gamma, float* dx) const {
    const int64_t channels = shape_.channels;
    const float inverse_channels = 1.0f / static_cast<float>(channels);
    ParallelFor(parallel, shape_.rows, MinChunkFor(8 * channels), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const float* x_row = x + row * channels;
        const float* dy_row = dy + row * channels;
        float* dx_row = dx + row * channels;
        const RowStatistics statistics = ComputeRowStatistics(x_row, channels, shape_.epsilon);
        const float mean = statistics.mean;
        const float rstd = statistics.rstd;
        float g_lanes[kReductionLanes] = {};
        float g_xhat_lanes[kReductionLanes] = {};
        int64_t c = 0;
        for (; c + kReductionLanes <= channels; c += kReductionLanes) {
          for (int k = 0; k < kReductionLanes; ++k) {
            float g = dy_row[c + k] * gamma[c + k];
            g_lanes[k] += g;
            g_xhat_lanes[k] += g * ((x_row[c + k] - mean) * rstd);
          }
        }
        float g_sum = 0.0f;
        float g_xhat_sum = 0.0f;
        for (int k = 0; k < kReductionLanes; ++k) {
          g_sum += g_lanes[k];
          g_xhat_sum += g_xhat_lanes[k];
        }
        for (; c < channels; ++c) {
          float g = dy_row[c] * gamma[c];
          g_sum += g;
          g_xhat_sum += g * ((x_row[c] - mean) * rstd);
        }
        const float g_mean = g_sum * inverse_channels;
        const float g_xhat_mean = g_xhat_sum * inverse_channels;
        for (c = 0; c < channels; ++c) {
          float xhat = (x_row[c] - mean) * rstd;
          dx_row[c] = rstd * (dy_row[c] * gamma[c] - g_mean - xhat * g_xhat_mean);
        }
      }
    });
  }

  const LayerNormShape shape_;
};

}  // namespace

void RegisterLayerNormKernels(KernelRegistry* registry) {
  registry->Register("layer_norm", LayerNormKernel::Create);
  registry->Register("layer_norm_grad", LayerNormGradKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
