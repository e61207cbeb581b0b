#include "runtime/kernels/cpu/bf16_arrays.h"

#include <cstring>

#include "base/cpu_features.h"

namespace softwire {
namespace runtime {
namespace {

// The loops, written once as inline functions so each copy below compiles the same source for
// its instruction set.
inline void ConvertLoop(const float* __restrict x, BFloat16* __restrict y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) y[i] = ToBFloat16(x[i]);
}

inline void RoundLoop(const float* __restrict x, float* __restrict y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) y[i] = ToFloat(ToBFloat16(x[i]));
}

inline void TruncateLoop(const float* __restrict x, BFloat16* __restrict y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &x[i], sizeof(bits));
    y[i] = BFloat16{static_cast<uint16_t>(bits >> 16)};
  }
}

void ConvertPortable(const float* x, BFloat16* y, int64_t count) {
  ConvertLoop(x, y, count);
}
void RoundPortable(const float* x, float* y, int64_t count) {
  RoundLoop(x, y, count);
}
void TruncatePortable(const float* x, BFloat16* y, int64_t count) {
  TruncateLoop(x, y, count);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SOFTWIRE_WIDE_BF16_ARRAYS 1
#define SOFTWIRE_AVX512BW __attribute__((target("avx512f,avx512bw,avx512vl")))
SOFTWIRE_AVX512BW void ConvertWide(const float* x, BFloat16* y, int64_t count) {
  ConvertLoop(x, y, count);
}
SOFTWIRE_AVX512BW void RoundWide(const float* x, float* y, int64_t count) {
  RoundLoop(x, y, count);
}
SOFTWIRE_AVX512BW void TruncateWide(const float* x, BFloat16* y, int64_t count) {
  TruncateLoop(x, y, count);
}
#endif

struct Implementation {
  void (*convert)(const float*, BFloat16*, int64_t) = ConvertPortable;
  void (*round)(const float*, float*, int64_t) = RoundPortable;
  void (*truncate)(const float*, BFloat16*, int64_t) = TruncatePortable;
  const char* name = "portable";
};

const Implementation& Chosen() {
  static const Implementation chosen = [] {
    Implementation implementation;
#ifdef SOFTWIRE_WIDE_BF16_ARRAYS
    if (DetectCpuFeatures().avx512bw) {
      implementation.convert = ConvertWide;
      implementation.round = RoundWide;
      implementation.truncate = TruncateWide;
      implementation.name = "avx512bw";
    }
#endif
    return implementation;
  }();
  return chosen;
}

}  // namespace

void ConvertToBFloat16(const float* x, BFloat16* y, int64_t count) {
  Chosen().convert(x, y, count);
}

void RoundThroughBFloat16(const float* x, float* y, int64_t count) {
  Chosen().round(x, y, count);
}

void TruncateToBFloat16(const float* x, BFloat16* y, int64_t count) {
  Chosen().truncate(x, y, count);
}

const char* BFloat16ArraysImplementation() {
  return Chosen().name;
}

}  // namespace runtime
}  // namespace softwire
