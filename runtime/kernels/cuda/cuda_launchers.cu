// The device code of cuda_launchers.h. Element-wise work is a grid-stride loop over 256-thread
// blocks; column sums (bias_add_grad) and reductions to few outputs split each sum over a
// block's threads and combine the parts in a fixed shape. Every sum has a fixed order, the same
// on every run. Row work (softmax, cross entropy, layer_norm) is in row_launchers.cu.
#include <cmath>

#include "runtime/kernels/cuda/cuda_launchers.h"

namespace softwire {
namespace runtime {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr float kSqrtTwoOverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

// Enough blocks for `n` threads, at most what keeps an H100/H200 busy (grid-stride beyond).
unsigned Blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 65535 ? 65535 : blocks));
}

#define SOFTWIRE_GRID_LOOP(i, n)                                                         \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

__device__ void GeluTerms(float x, float* e, float* s) {
  float two_u = 2.0f * kSqrtTwoOverPi * (x + kGeluCubic * x * x * x);
  two_u = fminf(fmaxf(two_u, -40.0f), 40.0f);
  *e = expf(two_u);
  *s = 1.0f / (1.0f + *e);
}

__global__ void FillKernel(float* y, float value, int64_t n) {
  SOFTWIRE_GRID_LOOP(i, n) y[i] = value;
}

__global__ void ScaleKernel(const float* x, float* y, float factor, int64_t n) {
  SOFTWIRE_GRID_LOOP(i, n) y[i] = factor * x[i];
}

__global__ void AddNKernel(Summands summands, bool add_to_y, float* y, int64_t n) {
  SOFTWIRE_GRID_LOOP(i, n) {
    float sum = add_to_y ? y[i] + summands.x[0][i] : summands.x[0][i];
    for (int k = 1; k < summands.count; ++k) sum += summands.x[k][i];
    y[i] = sum;
  }
}

__global__ void ActivationForwardKernel(Activation activation, const float* x, float* y,
                                        int64_t n) {
  SOFTWIRE_GRID_LOOP(i, n) {
    const float v = x[i];
    if (activation == Activation::kRelu) {
      y[i] = v > 0.0f ? v : 0.0f;
    } else {
      float e, s;
      GeluTerms(v, &e, &s);
      y[i] = v * e * s;
    }
  }
}

__global__ void ActivationBackwardKernel(Activation activation, const float* dy, const float* saved,
                                         float* dx, int64_t n) {
  SOFTWIRE_GRID_LOOP(i, n) {
    if (activation == Activation::kRelu) {
      dx[i] = saved[i] > 0.0f ? dy[i] : 0.0f;
    } else {
      const float x = saved[i];
      float e, s;
      GeluTerms(x, &e, &s);
      const float e_s = e * s;
      const float derivative =
          e_s + 2.0f * x * e_s * s * kSqrtTwoOverPi * (1.0f + 3.0f * kGeluCubic * x * x);
      dx[i] = dy[i] * derivative;
    }
  }
}

__global__ void BiasAddKernel(const float* x, const float* bias, float* y, int64_t rows,
                              int64_t channels) {
  SOFTWIRE_GRID_LOOP(i, rows * channels) y[i] = x[i] + bias[i % channels];
}

// Column sums: a block of kColumnWarps warps per 32 columns; lane j of warp w sums column j over
// rows w, w + kColumnWarps, ... in order, then thread j of warp 0 adds the warps' sums in warp
// order. A fixed order (the same on every run), and 128 blocks for 4096 columns instead of 16
// threads' worth of blocks summing 512 rows each (40 -> under 10 us on an H200).
constexpr int kColumnWarps = 8;

__global__ void BiasAddGradKernel(const float* dy, float* dbias, int64_t rows, int64_t channels) {
  __shared__ float partial[kColumnWarps][32];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * 32 + threadIdx.x;
  float sum = 0.0f;
  if (c < channels) {
    for (int64_t row = threadIdx.y; row < rows; row += kColumnWarps) sum += dy[row * channels + c];
  }
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && c < channels) {
    float total = partial[0][threadIdx.x];
    for (int w = 1; w < kColumnWarps; ++w) total += partial[w][threadIdx.x];
    dbias[c] = total;
  }
}

__global__ void BroadcastKernel(BinaryOp op, const float* a, const float* b, float* c,
                                BroadcastIndex index, int64_t n) {
  SOFTWIRE_GRID_LOOP(i, n) {
    int64_t rest = i;
    int64_t a_offset = 0;
    int64_t b_offset = 0;
    for (int axis = index.rank - 1; axis >= 0; --axis) {
      const int64_t coordinate = rest % index.dims[axis];
      rest /= index.dims[axis];
      a_offset += coordinate * index.a_strides[axis];
      b_offset += coordinate * index.b_strides[axis];
    }
    const float x = a[a_offset];
    if (op == BinaryOp::kFirst) {
      c[i] = x;
      continue;
    }
    const float y = b[b_offset];
    c[i] = op == BinaryOp::kAdd ? x + y : (op == BinaryOp::kSub ? x - y : x * y);
  }
}

__global__ void ReduceKernel(const float* x, float* y, ReductionIndex index, int64_t outputs,
                             float scale) {
  SOFTWIRE_GRID_LOOP(o, outputs) {
    int64_t rest = o;
    int64_t base = 0;
    for (int axis = index.kept_rank - 1; axis >= 0; --axis) {
      base += (rest % index.kept_dims[axis]) * index.kept_strides[axis];
      rest /= index.kept_dims[axis];
    }
    float sum = 0.0f;
    for (int64_t r = 0; r < index.reduced_count; ++r) {
      int64_t offset = base;
      int64_t left = r;
      for (int axis = index.reduced_rank - 1; axis >= 0; --axis) {
        offset += (left % index.reduced_dims[axis]) * index.reduced_strides[axis];
        left /= index.reduced_dims[axis];
      }
      sum += x[offset];
    }
    y[o] = scale * sum;
  }
}

// Few outputs over many elements (a loss's mean over the batch): a block per output; thread t
// sums elements t, t + blockDim, ... in order, then a tree over the block's threads in a fixed
// shape, so the result is the same on every run. (A thread per output summed the MLP's 512
// losses in 113 us on an H200.)
__global__ void ReduceBlockKernel(const float* x, float* y, ReductionIndex index, float scale) {
  __shared__ float partial[kThreads];
  const int64_t o = blockIdx.x;
  int64_t rest = o;
  int64_t base = 0;
  for (int axis = index.kept_rank - 1; axis >= 0; --axis) {
    base += (rest % index.kept_dims[axis]) * index.kept_strides[axis];
    rest /= index.kept_dims[axis];
  }
  float sum = 0.0f;
  for (int64_t r = threadIdx.x; r < index.reduced_count; r += blockDim.x) {
    int64_t offset = base;
    int64_t left = r;
    for (int axis = index.reduced_rank - 1; axis >= 0; --axis) {
      offset += (left % index.reduced_dims[axis]) * index.reduced_strides[axis];
      left /= index.reduced_dims[axis];
    }
    sum += x[offset];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[o] = scale * partial[0];
}

__global__ void SgdUpdateKernel(const float* gradient, float* weight, float* velocity, int64_t n,
                                SgdSettings s) {
  SOFTWIRE_GRID_LOOP(i, n) {
    const float g = s.gradient_scale * gradient[i] + s.weight_decay * weight[i];
    velocity[i] = s.momentum * velocity[i] + g;
    weight[i] -= s.learning_rate * velocity[i];
  }
}

__global__ void AdamUpdateKernel(const float* gradient, float* weight, float* m, float* v,
                                 int64_t n, AdamConstants c) {
  SOFTWIRE_GRID_LOOP(i, n) {
    const float g = c.gradient_scale * gradient[i];
    const float m_i = c.beta1 * m[i] + c.one_minus_beta1 * g;
    const float v_i = c.beta2 * v[i] + c.one_minus_beta2 * (g * g);
    m[i] = m_i;
    v[i] = v_i;
    const float update =
        (m_i * c.inverse_correction1) / (sqrtf(v_i * c.inverse_correction2) + c.epsilon);
    weight[i] -= c.learning_rate * (update + c.weight_decay * weight[i]);
  }
}

}  // namespace

cudaError_t Fill(float* y, float value, int64_t n, cudaStream_t stream) {
  FillKernel<<<Blocks(n), kThreads, 0, stream>>>(y, value, n);
  return cudaGetLastError();
}

cudaError_t Scale(const float* x, float* y, float factor, int64_t n, cudaStream_t stream) {
  ScaleKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, factor, n);
  return cudaGetLastError();
}

cudaError_t AddN(const Summands& summands, bool add_to_y, float* y, int64_t n,
                 cudaStream_t stream) {
  AddNKernel<<<Blocks(n), kThreads, 0, stream>>>(summands, add_to_y, y, n);
  return cudaGetLastError();
}

cudaError_t ActivationForward(Activation activation, const float* x, float* y, int64_t n,
                              cudaStream_t stream) {
  ActivationForwardKernel<<<Blocks(n), kThreads, 0, stream>>>(activation, x, y, n);
  return cudaGetLastError();
}

cudaError_t ActivationBackward(Activation activation, const float* dy, const float* saved,
                               float* dx, int64_t n, cudaStream_t stream) {
  ActivationBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(activation, dy, saved, dx, n);
  return cudaGetLastError();
}

cudaError_t BiasAdd(const float* x, const float* bias, float* y, int64_t rows, int64_t channels,
                    cudaStream_t stream) {
  BiasAddKernel<<<Blocks(rows * channels), kThreads, 0, stream>>>(x, bias, y, rows, channels);
  return cudaGetLastError();
}

cudaError_t BiasAddGrad(const float* dy, float* dbias, int64_t rows, int64_t channels,
                        cudaStream_t stream) {
  const int64_t blocks = (channels + 31) / 32;
  if (blocks > 2147483647) return cudaErrorInvalidConfiguration;
  BiasAddGradKernel<<<static_cast<unsigned>(blocks), dim3(32, kColumnWarps), 0, stream>>>(
      dy, dbias, rows, channels);
  return cudaGetLastError();
}

cudaError_t Broadcast(BinaryOp op, const float* a, const float* b, float* c,
                      const BroadcastIndex& index, int64_t n, cudaStream_t stream) {
  BroadcastKernel<<<Blocks(n), kThreads, 0, stream>>>(op, a, b, c, index, n);
  return cudaGetLastError();
}

cudaError_t Reduce(const float* x, float* y, const ReductionIndex& index, int64_t outputs,
                   float scale, cudaStream_t stream) {
  // A block per output when the outputs are too few to fill the device with threads and each
  // sums many elements; a thread per output otherwise.
  if (outputs <= 4096 && index.reduced_count >= 256) {
    ReduceBlockKernel<<<static_cast<unsigned>(outputs), kThreads, 0, stream>>>(x, y, index, scale);
  } else {
    ReduceKernel<<<Blocks(outputs), kThreads, 0, stream>>>(x, y, index, outputs, scale);
  }
  return cudaGetLastError();
}

cudaError_t SgdUpdate(const float* gradient, float* weight, float* velocity, int64_t n,
                      const SgdSettings& settings, cudaStream_t stream) {
  SgdUpdateKernel<<<Blocks(n), kThreads, 0, stream>>>(gradient, weight, velocity, n, settings);
  return cudaGetLastError();
}

cudaError_t AdamUpdate(const float* gradient, float* weight, float* m, float* v, int64_t n,
                       const AdamConstants& constants, cudaStream_t stream) {
  AdamUpdateKernel<<<Blocks(n), kThreads, 0, stream>>>(gradient, weight, m, v, n, constants);
  return cudaGetLastError();
}

}  // namespace cuda
}  // namespace runtime
}  // namespace softwire
