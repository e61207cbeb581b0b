#include "base/random.h"

#include <cmath>

#include "base/counter_hash.h"

#if defined(__x86_64__) && defined(SOFTWIRE_HAVE_LIBMVEC)
#include <immintrin.h>
#endif

namespace softwire {
namespace {

using counter_hash::HashMixed;
using counter_hash::SplitMix64;
using counter_hash::UnitOf;

#if defined(__x86_64__) && defined(SOFTWIRE_HAVE_LIBMVEC)
#pragma GCC push_options
#pragma GCC target("avx2")
extern "C" __m256d _ZGVdN4v_log(__m256d);  // glibc libmvec: log of 4 doubles (AVX2).
extern "C" __m256d _ZGVdN4v_cos(__m256d);  // glibc libmvec: cos of 4 doubles (AVX2).

// The whole groups of four of FillNormals; returns how many values it wrote.
int64_t FillNormalsAvx2(uint64_t mixed_seed, uint64_t first, int64_t count, float* out) {
  alignas(32) double u1[4];
  alignas(32) double u2[4];
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) {
    for (int k = 0; k < 4; ++k) {
      const uint64_t index = first + static_cast<uint64_t>(i + k);
      u1[k] = 1.0 - UnitOf(HashMixed(mixed_seed, 2 * index));
      u2[k] = UnitOf(HashMixed(mixed_seed, 2 * index + 1));
    }
    // The scalar NormalAt's operations in its order: sqrt(-2 log u1) * cos(2 pi u2).
    const __m256d radius =
        _mm256_sqrt_pd(_mm256_mul_pd(_mm256_set1_pd(-2.0), _ZGVdN4v_log(_mm256_load_pd(u1))));
    const __m256d angle =
        _ZGVdN4v_cos(_mm256_mul_pd(_mm256_set1_pd(2.0 * M_PI), _mm256_load_pd(u2)));
    _mm_storeu_ps(out + i, _mm256_cvtpd_ps(_mm256_mul_pd(radius, angle)));
  }
  return i;
}
#pragma GCC pop_options

bool CpuRunsAvx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}
#endif

}  // namespace

uint64_t HashCounter(uint64_t seed, uint64_t counter) {
  return HashMixed(SplitMix64(seed), counter);
}

void FillNormals(uint64_t seed, uint64_t first, int64_t count, float* out) {
  int64_t done = 0;
#if defined(__x86_64__) && defined(SOFTWIRE_HAVE_LIBMVEC)
  if (CpuRunsAvx2()) done = FillNormalsAvx2(SplitMix64(seed), first, count, out);
#endif
  for (int64_t i = done; i < count; ++i) {
    out[i] = static_cast<float>(NormalAt(seed, first + static_cast<uint64_t>(i)));
  }
}

double UniformAt(uint64_t seed, uint64_t index) {
  return UnitOf(HashCounter(seed, index));
}

double NormalAt(uint64_t seed, uint64_t index) {
  // 1 - u keeps the logarithm's argument in (0, 1].
  double u1 = 1.0 - UniformAt(seed, 2 * index);
  double u2 = UniformAt(seed, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

int64_t UniformIntAt(uint64_t seed, uint64_t index, int64_t bound) {
  return counter_hash::IntOf(HashCounter(seed, index), bound);
}

}  // namespace softwire
