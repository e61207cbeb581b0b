// The device functions of row-wise ops: softmax, softmax_grad, softmax_cross_entropy(_grad),
// layer_norm, layer_norm_grad and accuracy. Plain C++ declarations like cuda_launchers.h (only
// row_launchers.cu goes through nvcc); each launcher enqueues its work on `stream` and returns
// cudaGetLastError().
//
// A warp per row (8 rows per 256-thread block, grid-stride over rows beyond). Sum order, fixed
// by the shape alone, so every run gives the same bits: lane l (0..31) sums the row's elements
// l, l + 32, l + 64, ... left to right, then the 32 lane sums are combined by a butterfly
// (__shfl_xor_sync at distances 16, 8, 4, 2, 1), which leaves the same value in every lane. The
// cpu kernels sum in 16 lanes (vector_math.h), so sums round differently: within
// cuda_kernels_gpu_test's 1e-5 relative tolerance. Maxima are exact in any order.
//
// Column sums (layer_norm_grad's dgamma and dbeta) are a block per 32 columns: row lane r
// (0..31) sums rows r, r + 32, ... in order, then lane sums are added in lane order.
//
// Bad data: a label outside [0, classes) gives NaN (loss, gradient row, accuracy) where the cpu
// kernel fails the firing.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_ROW_LAUNCHERS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_ROW_LAUNCHERS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace softwire {
namespace runtime {
namespace cuda {

// A label outside [0, classes) gives a NaN loss (and NaN gradients for its row).
cudaError_t SoftmaxCrossEntropy(const float* logits, const int32_t* labels, float* loss,
                                int64_t rows, int64_t classes, cudaStream_t stream);
cudaError_t SoftmaxCrossEntropyGrad(const float* dloss, const float* logits, const int32_t* labels,
                                    float* dlogits, int64_t rows, int64_t classes,
                                    cudaStream_t stream);
// Rows of `length`; causal: row r keeps its first r % length + 1 entries, the rest are 0.
cudaError_t Softmax(const float* x, float* y, int64_t rows, int64_t length, bool causal,
                    cudaStream_t stream);
cudaError_t SoftmaxGrad(const float* dy, const float* y, float* dx, int64_t rows, int64_t length,
                        cudaStream_t stream);

// y = (x - mean) * rstd * gamma + beta per row of `channels`; mean first, then the variance as
// the mean squared deviation from it (layer_norm_kernels.cc's two passes).
cudaError_t LayerNorm(const float* x, const float* gamma, const float* beta, float* y, int64_t rows,
                      int64_t channels, float epsilon, cudaStream_t stream);
// layer_norm_kernels.cc's three passes: xhat into dx (scratch), dgamma and dbeta as column
// sums, then dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * gamma.
cudaError_t LayerNormGrad(const float* dy, const float* x, const float* gamma, float* dx,
                          float* dgamma, float* dbeta, int64_t rows, int64_t channels,
                          float epsilon, cudaStream_t stream);
// y[0] = (rows whose first maximum is at the label) / divisor, 0 when divisor is 0; NaN when a
// label is outside [0, classes). One block: the count is an integer, the same every run.
cudaError_t Accuracy(const float* logits, const int32_t* labels, float* y, int64_t rows,
                     int64_t classes, int64_t divisor, cudaStream_t stream);

}  // namespace cuda
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_ROW_LAUNCHERS_H_
