// The device code of row_launchers.h: a warp per row, lane sums combined by a butterfly.
#include <cmath>

#include "runtime/kernels/cuda/row_launchers.h"

namespace softwire {
namespace runtime {
namespace cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;  // Warps of a 256-thread block.
constexpr unsigned kAllLanes = 0xffffffffu;

// Enough blocks for a warp per row, at most 65535 (grid-stride beyond).
unsigned RowBlocks(int64_t rows) {
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

__device__ int Lane() {
  return static_cast<int>(threadIdx.x) % kWarp;
}
__device__ int64_t FirstRow() {
  return static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
}
__device__ int64_t RowStride() {
  return static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
}

// The butterfly: every lane ends with the same sum (a + b == b + a in IEEE arithmetic).
__device__ float WarpSum(float value) {
  for (int distance = kWarp / 2; distance > 0; distance /= 2) {
    value += __shfl_xor_sync(kAllLanes, value, distance);
  }
  return value;
}
__device__ float WarpMax(float value) {
  for (int distance = kWarp / 2; distance > 0; distance /= 2) {
    value = fmaxf(value, __shfl_xor_sync(kAllLanes, value, distance));
  }
  return value;
}

__device__ float RowMax(const float* x, int64_t length) {
  float maximum = -INFINITY;
  for (int64_t j = Lane(); j < length; j += kWarp) maximum = fmaxf(maximum, x[j]);
  return WarpMax(maximum);
}
__device__ float RowSum(const float* x, int64_t length) {
  float sum = 0.0f;
  for (int64_t j = Lane(); j < length; j += kWarp) sum += x[j];
  return WarpSum(sum);
}
__device__ float RowSumExp(const float* x, int64_t length, float maximum) {
  float sum = 0.0f;
  for (int64_t j = Lane(); j < length; j += kWarp) sum += expf(x[j] - maximum);
  return WarpSum(sum);
}

__global__ void SoftmaxKernel(const float* x, float* y, int64_t rows, int64_t length, bool causal) {
  for (int64_t row = FirstRow(); row < rows; row += RowStride()) {
    const float* x_row = x + row * length;
    float* y_row = y + row * length;
    const int64_t valid = causal ? row % length + 1 : length;
    const float maximum = RowMax(x_row, valid);
    float sum = 0.0f;
    for (int64_t j = Lane(); j < valid; j += kWarp) {
      y_row[j] = expf(x_row[j] - maximum);
      sum += y_row[j];
    }
    const float inverse_sum = 1.0f / WarpSum(sum);
    for (int64_t j = Lane(); j < valid; j += kWarp) y_row[j] *= inverse_sum;
    for (int64_t j = valid + Lane(); j < length; j += kWarp) y_row[j] = 0.0f;
  }
}

__global__ void SoftmaxGradKernel(const float* dy, const float* y, float* dx, int64_t rows,
                                  int64_t length) {
  for (int64_t row = FirstRow(); row < rows; row += RowStride()) {
    const float* dy_row = dy + row * length;
    const float* y_row = y + row * length;
    float* dx_row = dx + row * length;
    float dot = 0.0f;
    for (int64_t j = Lane(); j < length; j += kWarp) dot += dy_row[j] * y_row[j];
    dot = WarpSum(dot);
    for (int64_t j = Lane(); j < length; j += kWarp) dx_row[j] = y_row[j] * (dy_row[j] - dot);
  }
}

__global__ void SoftmaxCrossEntropyKernel(const float* logits, const int32_t* labels, float* loss,
                                          int64_t rows, int64_t classes) {
  for (int64_t row = FirstRow(); row < rows; row += RowStride()) {
    const float* x = logits + row * classes;
    const int32_t label = labels[row];
    if (label < 0 || label >= classes) {
      if (Lane() == 0) loss[row] = nanf("");
      continue;
    }
    const float maximum = RowMax(x, classes);
    const float sum = RowSumExp(x, classes, maximum);
    if (Lane() == 0) loss[row] = (logf(sum) + maximum) - x[label];
  }
}

__global__ void SoftmaxCrossEntropyGradKernel(const float* dloss, const float* logits,
                                              const int32_t* labels, float* dlogits, int64_t rows,
                                              int64_t classes) {
  for (int64_t row = FirstRow(); row < rows; row += RowStride()) {
    const float* x = logits + row * classes;
    float* dx = dlogits + row * classes;
    const int32_t label = labels[row];
    if (label < 0 || label >= classes) {
      for (int64_t v = Lane(); v < classes; v += kWarp) dx[v] = nanf("");
      continue;
    }
    const float maximum = RowMax(x, classes);
    const float scale = dloss[row] / RowSumExp(x, classes, maximum);
    for (int64_t v = Lane(); v < classes; v += kWarp) {
      const float value = scale * expf(x[v] - maximum);
      dx[v] = v == label ? value - dloss[row] : value;
    }
  }
}

struct RowStatistics {
  float mean;
  float rstd;
};

__device__ RowStatistics StatisticsOf(const float* x, int64_t channels, float epsilon) {
  const float inverse_channels = 1.0f / static_cast<float>(channels);
  RowStatistics statistics;
  statistics.mean = RowSum(x, channels) * inverse_channels;
  float squares = 0.0f;
  for (int64_t c = Lane(); c < channels; c += kWarp) {
    const float deviation = x[c] - statistics.mean;
    squares += deviation * deviation;
  }
  const float variance = WarpSum(squares) * inverse_channels;
  statistics.rstd = 1.0f / sqrtf(variance + epsilon);
  return statistics;
}

__global__ void LayerNormKernel(const float* x, const float* gamma, const float* beta, float* y,
                                int64_t rows, int64_t channels, float epsilon) {
  for (int64_t row = FirstRow(); row < rows; row += RowStride()) {
    const float* x_row = x + row * channels;
    float* y_row = y + row * channels;
    const RowStatistics statistics = StatisticsOf(x_row, channels, epsilon);
    for (int64_t c = Lane(); c < channels; c += kWarp) {
      y_row[c] = (x_row[c] - statistics.mean) * statistics.rstd * gamma[c] + beta[c];
    }
  }
}

// Pass 1 of layer_norm_grad: xhat = (x - mean) * rstd.
__global__ void NormalizedInputKernel(const float* x, float* xhat, int64_t rows, int64_t channels,
                                      float epsilon) {
  for (int64_t row = FirstRow(); row < rows; row += RowStride()) {
    const float* x_row = x + row * channels;
    float* xhat_row = xhat + row * channels;
    const RowStatistics statistics = StatisticsOf(x_row, channels, epsilon);
    for (int64_t c = Lane(); c < channels; c += kWarp) {
      xhat_row[c] = (x_row[c] - statistics.mean) * statistics.rstd;
    }
  }
}

// Pass 2: dgamma[c] = sum over rows of dy * xhat, dbeta[c] = sum over rows of dy. Block
// (32 columns) x (32 row lanes); row lane r sums rows r, r + 32, ...; lanes added in order.
__global__ void ColumnSumsKernel(const float* dy, const float* xhat, float* dgamma, float* dbeta,
                                 int64_t rows, int64_t channels) {
  __shared__ float gamma_lanes[kWarp][kWarp + 1];
  __shared__ float beta_lanes[kWarp][kWarp + 1];
  const int column_lane = static_cast<int>(threadIdx.x);
  const int row_lane = static_cast<int>(threadIdx.y);
  const int64_t column = static_cast<int64_t>(blockIdx.x) * kWarp + column_lane;
  float gamma_sum = 0.0f;
  float beta_sum = 0.0f;
  if (column < channels) {
    for (int64_t row = row_lane; row < rows; row += kWarp) {
      const float g = dy[row * channels + column];
      gamma_sum += g * xhat[row * channels + column];
      beta_sum += g;
    }
  }
  gamma_lanes[row_lane][column_lane] = gamma_sum;
  beta_lanes[row_lane][column_lane] = beta_sum;
  __syncthreads();
  if (row_lane != 0 || column >= channels) return;
  gamma_sum = 0.0f;
  beta_sum = 0.0f;
  for (int lane = 0; lane < kWarp; ++lane) {
    gamma_sum += gamma_lanes[lane][column_lane];
    beta_sum += beta_lanes[lane][column_lane];
  }
  dgamma[column] = gamma_sum;
  dbeta[column] = beta_sum;
}

// Pass 3: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma.
__global__ void InputGradientKernel(const float* dy, const float* x, const float* gamma, float* dx,
                                    int64_t rows, int64_t channels, float epsilon) {
  const float inverse_channels = 1.0f / static_cast<float>(channels);
  for (int64_t row = FirstRow(); row < rows; row += RowStride()) {
    const float* x_row = x + row * channels;
    const float* dy_row = dy + row * channels;
    float* dx_row = dx + row * channels;
    const RowStatistics statistics = StatisticsOf(x_row, channels, epsilon);
    float g_sum = 0.0f;
    float g_xhat_sum = 0.0f;
    for (int64_t c = Lane(); c < channels; c += kWarp) {
      const float g = dy_row[c] * gamma[c];
      g_sum += g;
      g_xhat_sum += g * ((x_row[c] - statistics.mean) * statistics.rstd);
    }
    const float g_mean = WarpSum(g_sum) * inverse_channels;
    const float g_xhat_mean = WarpSum(g_xhat_sum) * inverse_channels;
    for (int64_t c = Lane(); c < channels; c += kWarp) {
      const float xhat = (x_row[c] - statistics.mean) * statistics.rstd;
      dx_row[c] = statistics.rstd * (dy_row[c] * gamma[c] - g_mean - xhat * g_xhat_mean);
    }
  }
}

// One block of 1024 threads, a thread per row (grid-stride within the block).
__global__ void AccuracyKernel(const float* logits, const int32_t* labels, float* y, int64_t rows,
                               int64_t classes, int64_t divisor) {
  __shared__ unsigned long long correct;
  __shared__ int bad_label;
  if (threadIdx.x == 0) {
    correct = 0;
    bad_label = 0;
  }
  __syncthreads();
  for (int64_t row = threadIdx.x; row < rows; row += blockDim.x) {
    const float* x = logits + row * classes;
    const int32_t label = labels[row];
    if (label < 0 || label >= classes) {
      atomicOr(&bad_label, 1);
      continue;
    }
    int64_t best = 0;
    for (int64_t v = 1; v < classes; ++v) {
      if (x[v] > x[best]) best = v;
    }
    if (best == label) atomicAdd(&correct, 1ull);
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  if (bad_label != 0) {
    y[0] = nanf("");
  } else {
    y[0] = divisor == 0
               ? 0.0f
               : static_cast<float>(static_cast<double>(correct) / static_cast<double>(divisor));
  }
}

}  // namespace

cudaError_t SoftmaxCrossEntropy(const float* logits, const int32_t* labels, float* loss,
                                int64_t rows, int64_t classes, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  SoftmaxCrossEntropyKernel<<<RowBlocks(rows), kWarp * kRowsPerBlock, 0, stream>>>(
      logits, labels, loss, rows, classes);
  return cudaGetLastError();
}

cudaError_t SoftmaxCrossEntropyGrad(const float* dloss, const float* logits, const int32_t* labels,
                                    float* dlogits, int64_t rows, int64_t classes,
                                    cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  SoftmaxCrossEntropyGradKernel<<<RowBlocks(rows), kWarp * kRowsPerBlock, 0, stream>>>(
      dloss, logits, labels, dlogits, rows, classes);
  return cudaGetLastError();
}

cudaError_t Softmax(const float* x, float* y, int64_t rows, int64_t length, bool causal,
                    cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  SoftmaxKernel<<<RowBlocks(rows), kWarp * kRowsPerBlock, 0, stream>>>(x, y, rows, length, causal);
  return cudaGetLastError();
}

cudaError_t SoftmaxGrad(const float* dy, const float* y, float* dx, int64_t rows, int64_t length,
                        cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  SoftmaxGradKernel<<<RowBlocks(rows), kWarp * kRowsPerBlock, 0, stream>>>(dy, y, dx, rows, length);
  return cudaGetLastError();
}

cudaError_t LayerNorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                      int64_t channels, float epsilon, cudaStream_t stream) {
  if (rows == 0) return cudaSuccess;
  LayerNormKernel<<<RowBlocks(rows), kWarp * kRowsPerBlock, 0, stream>>>(x, gamma, beta, y, rows,
                                                                         channels, epsilon);
  return cudaGetLastError();
}

cudaError_t LayerNormGrad(const float* dy, const float* x, const float* gamma, float* dx,
                          float* dgamma, float* dbeta, int64_t rows, int64_t channels,
                          float epsilon, cudaStream_t stream) {
  if (channels == 0) return cudaSuccess;
  NormalizedInputKernel<<<RowBlocks(rows), kWarp * kRowsPerBlock, 0, stream>>>(x, dx, rows,
                                                                               channels, epsilon);
  const unsigned column_blocks = static_cast<unsigned>((channels + kWarp - 1) / kWarp);
  ColumnSumsKernel<<<column_blocks, dim3(kWarp, kWarp), 0, stream>>>(dy, dx, dgamma, dbeta, rows,
                                                                     channels);
  if (rows > 0) {
    InputGradientKernel<<<RowBlocks(rows), kWarp * kRowsPerBlock, 0, stream>>>(
        dy, x, gamma, dx, rows, channels, epsilon);
  }
  return cudaGetLastError();
}

cudaError_t Accuracy(const float* logits, const int32_t* labels, float* y, int64_t rows,
                     int64_t classes, int64_t divisor, cudaStream_t stream) {
  AccuracyKernel<<<1, 1024, 0, stream>>>(logits, labels, y, rows, classes, divisor);
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace runtime
}  // namespace softwire
