// layer_norm and layer_norm_grad over the last axis, by the formulas of docs/OPS.md.
#include <cmath>

#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

// Mean and 1 / sqrt(biased variance + epsilon) of one row.
void RowStatistics(const double* x, int64_t channels, double epsilon, double* mean, double* rstd) {
  double sum = 0;
  for (int64_t c = 0; c < channels; ++c) sum += x[c];
  *mean = sum / channels;
  double squares = 0;
  for (int64_t c = 0; c < channels; ++c) squares += (x[c] - *mean) * (x[c] - *mean);
  *rstd = 1.0 / std::sqrt(squares / channels + epsilon);
}

// Checks x [..., C] (C > 0) and that every input in `per_channel` is [C]; returns C.
StatusOr<int64_t> CheckChannels(const ReferenceKernelCall& call, size_t x_input,
                                const std::vector<size_t>& per_channel) {
  const Shape& x = Input(call, x_input).shape;
  if (x.rank() < 1 || x.dim(-1) == 0) return OpError(call, "x must be [..., C] with C > 0");
  for (size_t input : per_channel) {
    if (Input(call, input).shape != Shape({x.dim(-1)})) {
      return OpError(call, "input " + std::to_string(input) + " must have shape [" +
                               std::to_string(x.dim(-1)) + "]");
    }
  }
  return x.dim(-1);
}

Status LayerNorm(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const double epsilon = attributes.Float("epsilon", 1e-5);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 3, 1));
  SOFTWIRE_ASSIGN_OR_RETURN(int64_t channels, CheckChannels(call, 0, {1, 2}));
  const ReferenceTensor& x = Input(call, 0);
  const std::vector<double>& gamma = Input(call, 1).values;
  const std::vector<double>& beta = Input(call, 2).values;
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
  const int64_t rows = x.shape.NumElements() / channels;
  for (int64_t row = 0; row < rows; ++row) {
    const double* x_row = x.values.data() + row * channels;
    double* y_row = Output(call, 0).values.data() + row * channels;
    double mean = 0;
    double rstd = 0;
    RowStatistics(x_row, channels, epsilon, &mean, &rstd);
    for (int64_t c = 0; c < channels; ++c) {
      y_row[c] = (x_row[c] - mean) * rstd * gamma[c] + beta[c];
    }
  }
  return Status::Ok();
}

Status LayerNormGrad(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const double epsilon = attributes.Float("epsilon", 1e-5);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 3, 3));
  SOFTWIRE_ASSIGN_OR_RETURN(int64_t channels, CheckChannels(call, 1, {2}));
  const ReferenceTensor& dy = Input(call, 0);
  const ReferenceTensor& x = Input(call, 1);
  const std::vector<double>& gamma = Input(call, 2).values;
  if (dy.shape != x.shape) return OpError(call, "dy must be shaped like x");
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 1, Shape({channels})));
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 2, Shape({channels})));
  std::vector<double>& dx = Output(call, 0).values;
  std::vector<double>& dgamma = Output(call, 1).values;
  std::vector<double>& dbeta = Output(call, 2).values;
  for (int64_t c = 0; c < channels; ++c) dgamma[c] = dbeta[c] = 0;
  const int64_t rows = x.shape.NumElements() / channels;
  std::vector<double> xhat(channels);
  std::vector<double> g(channels);
  for (int64_t row = 0; row < rows; ++row) {
    const double* x_row = x.values.data() + row * channels;
    const double* dy_row = dy.values.data() + row * channels;
    double mean = 0;
    double rstd = 0;
    RowStatistics(x_row, channels, epsilon, &mean, &rstd);
    double g_mean = 0;
    double g_xhat_mean = 0;
    for (int64_t c = 0; c < channels; ++c) {
      xhat[c] = (x_row[c] - mean) * rstd;
      g[c] = dy_row[c] * gamma[c];
      g_mean += g[c] / channels;
      g_xhat_mean += g[c] * xhat[c] / channels;
      dgamma[c] += dy_row[c] * xhat[c];
      dbeta[c] += dy_row[c];
    }
    for (int64_t c = 0; c < channels; ++c) {
      dx[row * channels + c] = rstd * (g[c] - g_mean - xhat[c] * g_xhat_mean);
    }
  }
  return Status::Ok();
}

}  // namespace

void RegisterReferenceLayerNormKernels(ReferenceKernelTable* table) {
  table->Register("layer_norm", LayerNorm);
  table->Register("layer_norm_grad", LayerNormGrad);
}

}  // namespace reference
}  // namespace softwire
