// Load and Store of one element, float32 or bfloat16, for kernels that run one loop over
// either type (docs/PRECISION.md, activations kept in bf16 between convolutions): they
// compute in float32 and store bfloat16 rounded to nearest, ties to even (base/bfloat16.h).
//
//   template <typename T> void Relu(const T* x, T* y, int64_t n) {
//     for (int64_t i = 0; i < n; ++i) Store(y + i, std::max(0.0f, Load(x[i])));
//   }
//
// Pure inline functions; thread-safe.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_BFLOAT16_ACCESS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_BFLOAT16_ACCESS_H_

#include "base/bfloat16.h"

namespace softwire {
namespace runtime {

inline float Load(float value) {
  return value;
}
inline float Load(BFloat16 value) {
  return ToFloat(value);
}

inline void Store(float* to, float value) {
  *to = value;
}
inline void Store(BFloat16* to, float value) {
  *to = ToBFloat16(value);
}

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_BFLOAT16_ACCESS_H_
