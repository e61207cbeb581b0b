// Float32 building blocks that GCC vectorises (the kernel library is built with -O3 and
// SOFTWIRE_KERNEL_FLAGS, i.e. AVX2 + FMA when the build machine has them).
//
// - Exp is a branch-free polynomial instead of std::exp, which glibc only vectorises under
//   -ffast-math. Its relative error is below 1e-7 on [-87, 88] (8.3e-8 at worst on a 1e-4 grid,
//   checked by vector_math_test). It saturates outside that range (exp(-100) returns
//   exp(-87) ~ 1.6e-38, exp(100) returns exp(88)) and NaN stays NaN. Every caller (softmax after
//   subtracting the row maximum, gelu with its argument clamped) tolerates the saturation.
// - Row reductions keep 16 independent partial sums: without -ffast-math the compiler must not
//   reorder a single float accumulator, so a plain loop would run one add at a time. Sixteen
//   lanes fill two AVX registers and, as a side effect, are more accurate than one running sum.
//   The order is fixed, so results do not depend on threads.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_VECTOR_MATH_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_VECTOR_MATH_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace softwire {
namespace runtime {

// exp(x) = 2^n * exp(r) with n = round(x / ln 2) and |r| <= ln(2) / 2; exp(r) by the Cephes
// expf polynomial.
inline float Exp(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  // Adding 1.5 * 2^23 rounds to the nearest integer in the float's low mantissa bits.
  const float kRoundMagic = 12582912.0f;
  float n = (x * 1.44269504088896341f + kRoundMagic) - kRoundMagic;
  float r = x - n * 0.693359375f;
  r = r + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t exponent = static_cast<int32_t>(n) + 127;
  uint32_t bits = static_cast<uint32_t>(exponent) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  return p * scale;
}

constexpr int kReductionLanes = 16;

inline float RowSum(const float* x, int64_t n) {
  float lanes[kReductionLanes] = {};
  int64_t i = 0;
  for (; i + kReductionLanes <= n; i += kReductionLanes) {
    for (int k = 0; k < kReductionLanes; ++k) lanes[k] += x[i + k];
  }
  float sum = 0;
  for (int k = 0; k < kReductionLanes; ++k) sum += lanes[k];
  for (; i < n; ++i) sum += x[i];
  return sum;
}

// sum of x[i] * y[i].
inline float RowDot(const float* x, const float* y, int64_t n) {
  float lanes[kReductionLanes] = {};
  int64_t i = 0;
  for (; i + kReductionLanes <= n; i += kReductionLanes) {
    for (int k = 0; k < kReductionLanes; ++k) lanes[k] += x[i + k] * y[i + k];
  }
  float sum = 0;
  for (int k = 0; k < kReductionLanes; ++k) sum += lanes[k];
  for (; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

// sum of (x[i] - center)^2.
inline float RowSumSquaredDeviations(const float* x, int64_t n, float center) {
  float lanes[kReductionLanes] = {};
  int64_t i = 0;
  for (; i + kReductionLanes <= n; i += kReductionLanes) {
    for (int k = 0; k < kReductionLanes; ++k) {
      float deviation = x[i + k] - center;
      lanes[k] += deviation * deviation;
    }
  }
  float sum = 0;
  for (int k = 0; k < kReductionLanes; ++k) sum += lanes[k];
  for (; i < n; ++i) sum += (x[i] - center) * (x[i] - center);
  return sum;
}

// sum of exp(x[i] - shift).
inline float RowSumExp(const float* x, int64_t n, float shift) {
  float lanes[kReductionLanes] = {};
  int64_t i = 0;
  for (; i + kReductionLanes <= n; i += kReductionLanes) {
    for (int k = 0; k < kReductionLanes; ++k) lanes[k] += Exp(x[i + k] - shift);
  }
  float sum = 0;
  for (int k = 0; k < kReductionLanes; ++k) sum += lanes[k];
  for (; i < n; ++i) sum += Exp(x[i] - shift);
  return sum;
}

// The largest of x[0..n), n >= 1, by the rule m = (x > m ? x : m): a NaN after the first
// element is passed over, but every caller goes on to read the whole row, so NaN still reaches
// its result.
//
// The one intrinsic in the kernels: GCC vectorises a float max reduction only under
// -ffinite-math-only -fno-signed-zeros, which would change NaN handling everywhere else.
// _mm256_max_ps(a, b) returns b when either is NaN, the scalar rule below.
inline float RowMax(const float* x, int64_t n) {
  float maximum = x[0];
  int64_t i = 0;
#if defined(__AVX__)
  if (n >= 16) {
    __m256 low = _mm256_loadu_ps(x);
    __m256 high = _mm256_loadu_ps(x + 8);
    for (i = 16; i + 16 <= n; i += 16) {
      low = _mm256_max_ps(_mm256_loadu_ps(x + i), low);
      high = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), high);
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, _mm256_max_ps(low, high));
    for (float lane : lanes) maximum = lane > maximum ? lane : maximum;
  }
#endif
  for (; i < n; ++i) maximum = x[i] > maximum ? x[i] : maximum;
  return maximum;
}

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_VECTOR_MATH_H_
