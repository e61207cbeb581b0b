// batch_norm and batch_norm_grad over every axis of x [N, C, ...] but the channels, with the
// batch's statistics (biased variance), by the formulas of docs/OPS.md.
#include <cmath>

#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

// x viewed as [N, C, S]: the elements of channel c are x[(n * C + c) * S + s].
struct ChannelLayout {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t spatial = 0;

  int64_t count() const { return batch * spatial; }
  template <typename Visit>
  void ForEach(int64_t c, Visit visit) const {
    for (int64_t n = 0; n < batch; ++n) {
      for (int64_t s = 0; s < spatial; ++s) visit((n * channels + c) * spatial + s);
    }
  }
};

StatusOr<ChannelLayout> ReadLayout(const ReferenceKernelCall& call, const Shape& x,
                                   const std::vector<size_t>& per_channel) {
  if (x.rank() < 2 || x.NumElements() == 0)
    return OpError(call, "x must be [N, C, ...], not empty");
  ChannelLayout layout{x.dim(0), x.dim(1), x.NumElements(2, x.rank())};
  for (size_t input : per_channel) {
    if (Input(call, input).shape != Shape({layout.channels})) {
      return OpError(call, "input " + std::to_string(input) + " must be [C]");
    }
  }
  return layout;
}

// Mean and 1 / sqrt(biased variance + epsilon) of channel c.
void ChannelStatistics(const ChannelLayout& layout, const std::vector<double>& x, int64_t c,
                       double epsilon, double* mean, double* rstd) {
  double sum = 0;
  layout.ForEach(c, [&](int64_t i) { sum += x[i]; });
  *mean = sum / layout.count();
  double squares = 0;
  layout.ForEach(c, [&](int64_t i) { squares += (x[i] - *mean) * (x[i] - *mean); });
  *rstd = 1.0 / std::sqrt(squares / layout.count() + epsilon);
}

// (x, gamma, beta[, running_mean, running_var]) -> y; use_running_statistics normalises with
// the running statistics instead of the batch's.
Status BatchNorm(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const double epsilon = attributes.Float("epsilon", 1e-5);
  attributes.Float("momentum", 0.1);  // For the running updates.
  const bool use_running = attributes.Bool("use_running_statistics", false);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  const bool running = call.inputs.size() == 5;
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, running ? 5 : 3, 1));
  if (use_running && !running) return OpError(call, "use_running_statistics needs them");
  const ReferenceTensor& x = Input(call, 0);
  SOFTWIRE_ASSIGN_OR_RETURN(
      ChannelLayout layout,
      ReadLayout(call, x.shape,
                 running ? std::vector<size_t>{1, 2, 3, 4} : std::vector<size_t>{1, 2}));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
  std::vector<double>& y = Output(call, 0).values;
  for (int64_t c = 0; c < layout.channels; ++c) {
    double mean = 0, rstd = 0;
    if (use_running) {
      mean = Input(call, 3).values[c];
      rstd = 1.0 / std::sqrt(Input(call, 4).values[c] + epsilon);
    } else {
      ChannelStatistics(layout, x.values, c, epsilon, &mean, &rstd);
    }
    const double gamma = Input(call, 1).values[c], beta = Input(call, 2).values[c];
    layout.ForEach(c, [&](int64_t i) { y[i] = (x.values[i] - mean) * rstd * gamma + beta; });
  }
  return Status::Ok();
}

// (dy, x, gamma) -> (dx, dgamma, dbeta): with g = dy gamma and means over the channel's
// elements, dx = rstd (g - mean(g) - xhat mean(g xhat)).
Status BatchNormGrad(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const double epsilon = attributes.Float("epsilon", 1e-5);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 3, 3));
  const ReferenceTensor& dy = Input(call, 0);
  const ReferenceTensor& x = Input(call, 1);
  if (dy.shape != x.shape) return OpError(call, "dy must be shaped like x");
  SOFTWIRE_ASSIGN_OR_RETURN(ChannelLayout layout, ReadLayout(call, x.shape, {2}));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 1, Shape({layout.channels})));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 2, Shape({layout.channels})));
  std::vector<double>& dx = Output(call, 0).values;
  for (int64_t c = 0; c < layout.channels; ++c) {
    double mean = 0, rstd = 0;
    ChannelStatistics(layout, x.values, c, epsilon, &mean, &rstd);
    const double gamma = Input(call, 2).values[c];
    double dgamma = 0, dbeta = 0;
    layout.ForEach(c, [&](int64_t i) {
      dgamma += dy.values[i] * (x.values[i] - mean) * rstd;
      dbeta += dy.values[i];
    });
    const double g_mean = gamma * dbeta / layout.count();
    const double g_xhat_mean = gamma * dgamma / layout.count();
    layout.ForEach(c, [&](int64_t i) {
      const double xhat = (x.values[i] - mean) * rstd;
      dx[i] = rstd * (dy.values[i] * gamma - g_mean - xhat * g_xhat_mean);
    });
    Output(call, 1).values[c] = dgamma;
    Output(call, 2).values[c] = dbeta;
  }
  return Status::Ok();
}

// x -> (mean, var): the batch's, var unbiased (count - 1; 0 for a count of 1).
Status BatchNormStatistics(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 2));
  const ReferenceTensor& x = Input(call, 0);
  SOFTWIRE_ASSIGN_OR_RETURN(ChannelLayout layout, ReadLayout(call, x.shape, {}));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, Shape({layout.channels})));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 1, Shape({layout.channels})));
  for (int64_t c = 0; c < layout.channels; ++c) {
    double sum = 0;
    layout.ForEach(c, [&](int64_t i) { sum += x.values[i]; });
    const double mean = sum / layout.count();
    double squares = 0;
    layout.ForEach(c, [&](int64_t i) { squares += (x.values[i] - mean) * (x.values[i] - mean); });
    Output(call, 0).values[c] = mean;
    Output(call, 1).values[c] = layout.count() > 1 ? squares / (layout.count() - 1) : 0.0;
  }
  return Status::Ok();
}

// (statistic, running) -> running updated in outputs[0] (initialised to it by the caller, as
// for the optimizers): (1 - momentum) running + momentum * scale * statistic.
Status RunningAverageUpdate(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const double momentum = attributes.RequiredFloat("momentum");
  const double scale = attributes.Float("scale", 1.0);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  if (Input(call, 0).shape != Input(call, 1).shape) {
    return OpError(call, "statistic must be shaped like running");
  }
  std::vector<double>& running = Output(call, 0).values;
  for (size_t i = 0; i < running.size(); ++i) {
    running[i] = (1 - momentum) * running[i] + momentum * scale * Input(call, 0).values[i];
  }
  return Status::Ok();
}

}  // namespace

void RegisterReferenceBatchNormKernels(ReferenceKernelTable* table) {
  table->Register("batch_norm", BatchNorm);
  table->Register("batch_norm_grad", BatchNormGrad);
  table->Register("batch_norm_statistics", BatchNormStatistics);
  table->Register("running_average_update", RunningAverageUpdate);
}

}  // namespace reference
}  // namespace softwire
