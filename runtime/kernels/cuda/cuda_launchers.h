// The device functions of the cuda kernels, one launcher each: plain C++ declarations (no CUDA
// syntax) so the kernel classes compile with the host compiler and only the three
// *_launchers.cu files go through nvcc (few .cu files keep the build's added time small,
// docs/CUDA.md). Each launcher
// enqueues its work on `stream` and returns cudaGetLastError(): a launch error, not the
// outcome of the work, which the queue's event reports.
//
// Sums run in the order the cpu kernels use where that is cheap (add_n and the optimizer's
// per-element updates match bit for bit); bias_add_grad and reductions to few outputs split each
// sum over a block (8 row stripes per column; 256 strided parts per output, combined as a
// tree), in an order fixed per shape (the cpu's 16-lane sums round differently: docs/CUDA.md
// gives the tolerances). Row-wise ops (softmax, cross entropy, layer_norm) are in
// row_launchers.h, data movement (transpose, slice, assemble, cast, embedding) in
// layout_launchers.h.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_LAUNCHERS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_LAUNCHERS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

namespace softwire {
namespace runtime {
namespace cuda {

constexpr int kMaxRank = 8;
constexpr int kMaxSummands = 8;

// Up to kMaxSummands inputs of one add_n launch.
struct Summands {
  const float* x[kMaxSummands] = {};
  int count = 0;
};

// c[i] = op(a[...], b[...]) over the broadcast result's row-major index: per axis of c, its
// extent and a's and b's element strides (0 on a broadcast axis).
struct BroadcastIndex {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
};

// y[o] = scale * sum of x over the reduced axes: the kept axes (extents, strides in x) give
// the output's row-major index, the reduced axes are walked row-major per output.
struct ReductionIndex {
  int kept_rank = 0;
  int64_t kept_dims[kMaxRank] = {};
  int64_t kept_strides[kMaxRank] = {};
  int reduced_rank = 0;
  int64_t reduced_dims[kMaxRank] = {};
  int64_t reduced_strides[kMaxRank] = {};
  int64_t reduced_count = 1;
};

enum class Activation { kRelu, kGelu };
// kFirst: c = a (broadcast_axes), b unread.
enum class BinaryOp { kAdd, kSub, kMul, kFirst };

struct SgdSettings {
  float learning_rate = 0;
  float momentum = 0;
  float weight_decay = 0;
  float gradient_scale = 1;
};

// One adam step's float32 constants (optimizer_kernels.cc's StepConstants).
struct AdamConstants {
  float learning_rate;
  float beta1;
  float beta2;
  float one_minus_beta1;
  float one_minus_beta2;
  float inverse_correction1;
  float inverse_correction2;
  float epsilon;
  float weight_decay;
  float gradient_scale;
};

cudaError_t Fill(float* y, float value, int64_t n, cudaStream_t stream);
cudaError_t Scale(const float* x, float* y, float factor, int64_t n, cudaStream_t stream);
// y = x0 + x1 + ... in order; with `add_to_y`, y = y + x0 + x1 + ...
cudaError_t AddN(const Summands& summands, bool add_to_y, float* y, int64_t n, cudaStream_t stream);
cudaError_t ActivationForward(Activation activation, const float* x, float* y, int64_t n,
                              cudaStream_t stream);
// dx = dy * f'(saved): saved is y for relu, x for gelu.
cudaError_t ActivationBackward(Activation activation, const float* dy, const float* saved,
                               float* dx, int64_t n, cudaStream_t stream);
cudaError_t BiasAdd(const float* x, const float* bias, float* y, int64_t rows, int64_t channels,
                    cudaStream_t stream);
cudaError_t BiasAddGrad(const float* dy, float* dbias, int64_t rows, int64_t channels,
                        cudaStream_t stream);
cudaError_t Broadcast(BinaryOp op, const float* a, const float* b, float* c,
                      const BroadcastIndex& index, int64_t n, cudaStream_t stream);
cudaError_t Reduce(const float* x, float* y, const ReductionIndex& index, int64_t outputs,
                   float scale, cudaStream_t stream);
cudaError_t SgdUpdate(const float* gradient, float* weight, float* velocity, int64_t n,
                      const SgdSettings& settings, cudaStream_t stream);
cudaError_t AdamUpdate(const float* gradient, float* weight, float* m, float* v, int64_t n,
                       const AdamConstants& constants, cudaStream_t stream);

}  // namespace cuda
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CUDA_CUDA_LAUNCHERS_H_
