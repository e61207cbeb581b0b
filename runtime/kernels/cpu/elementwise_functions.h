// The per-element functions of relu, gelu (tanh approximation) and their gradients, shared by
// their own kernels (activation_kernels.cc) and the fused kernel (fused_kernel.cc), so that a
// fused plan computes what the unfused plan computes, element for element.
//
// gelu through exp instead of tanh: with u = sqrt(2/pi) (x + 0.044715 x^3), e = exp(2u) and
// s = 1 / (1 + e), tanh(u) = 1 - 2s, so 1 + t = 2 e s, 1 - t = 2 s and 1 - t^2 = 4 e s^2.
// Every factor is then computed without cancellation (1 - t*t near t = 1 would lose all its
// digits), so gelu and gelu' keep float32's relative accuracy in both tails. 2u is clamped to
// [-40, 40], where tanh is +-1 to float precision, so that e and s stay normal numbers.
// Branch-free; gelu uses vector_math.h's polynomial Exp, so loops of them vectorise.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_ELEMENTWISE_FUNCTIONS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_ELEMENTWISE_FUNCTIONS_H_

#include <algorithm>
#include <cstdint>

#include "runtime/kernels/cpu/vector_math.h"

namespace softwire {
namespace runtime {

constexpr float kSqrtTwoOverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;
// Element operations of one gelu or gelu_grad element, for MinChunkFor.
constexpr int64_t kGeluWork = 20;

struct Relu {
  static constexpr int64_t kWork = 1;
  static float Apply(float x) { return x > 0.0f ? x : 0.0f; }
};

// e = exp(2u) and s = 1 / (1 + e) for the gelu argument u of x (see above).
struct GeluTerms {
  float e;
  float s;
};

inline GeluTerms ComputeGeluTerms(float x) {
  float two_u = 2.0f * kSqrtTwoOverPi * (x + kGeluCubic * x * x * x);
  two_u = std::min(std::max(two_u, -40.0f), 40.0f);
  GeluTerms terms;
  terms.e = Exp(two_u);
  terms.s = 1.0f / (1.0f + terms.e);
  return terms;
}

// y = 0.5 x (1 + t) = x e s.
struct Gelu {
  static constexpr int64_t kWork = kGeluWork;
  static float Apply(float x) {
    const GeluTerms terms = ComputeGeluTerms(x);
    return x * terms.e * terms.s;
  }
};

// dx = dy where y > 0, else 0.
struct ReluGrad {
  static constexpr int64_t kWork = 1;
  static float Apply(float dy, float y) { return y > 0.0f ? dy : 0.0f; }
};

// dx = dy * gelu'(x), gelu' = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 0.044715 x^2)
//                          = e s + 2 x e s^2 sqrt(2/pi) (1 + 3 0.044715 x^2).
struct GeluGrad {
  static constexpr int64_t kWork = kGeluWork;
  static float Apply(float dy, float x) {
    const GeluTerms terms = ComputeGeluTerms(x);
    const float e_s = terms.e * terms.s;
    const float derivative =
        e_s + 2.0f * x * e_s * terms.s * kSqrtTwoOverPi * (1.0f + 3.0f * kGeluCubic * x * x);
    return dy * derivative;
  }
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_ELEMENTWISE_FUNCTIONS_H_
