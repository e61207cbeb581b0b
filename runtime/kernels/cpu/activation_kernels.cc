// relu, relu_grad, gelu (tanh approximation) and gelu_grad.
//
// Parallelism: flat chunks; gelu's ~20 operations per element let smaller tensors split.
// Vectorisation: branch-free loops; gelu uses vector_math.h's polynomial Exp so it vectorises.
//
// gelu through exp instead of tanh: with u = sqrt(2/pi) (x + 0.044715 x^3), e = exp(2u) and
// s = 1 / (1 + e), tanh(u) = 1 - 2s, so 1 + t = 2 e s, 1 - t = 2 s and 1 - t^2 = 4 e s^2.
// Every factor is then computed without cancellation (1 - t*t near t = 1 would lose all its
// digits), so gelu and gelu' keep float32's relative accuracy in both tails. 2u is clamped to
// [-40, 40], where tanh is +-1 to float precision, so that e and s stay normal numbers.
#include <algorithm>
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"
#include "runtime/kernels/cpu/vector_math.h"

namespace softwire {
namespace runtime {
namespace {

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

template <typename Function>
class UnaryKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(
        CheckSignature(def, {"x"}, {DType::kFloat32}, {"y"}, {DType::kFloat32}));
    Shape x = ShapeOf(def.input(0));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), x));
    return std::unique_ptr<Kernel>(new UnaryKernel(x.NumElements()));
  }

  Status Run(const KernelContext& context) override {
    const float* x = context.inputs[0].As<float>();
    float* y = context.outputs[0].As<float>();
    ParallelFor(context.parallel, elements_, MinChunkFor(Function::kWork),
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) y[i] = Function::Apply(x[i]);
                });
    return Status::Ok();
  }

 private:
  explicit UnaryKernel(int64_t elements) : elements_(elements) {}

  const int64_t elements_;
};

// (dy, saved) -> dx with saved = y for relu, x for gelu.
template <typename Function>
class GradientKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup,
                                                  const char* saved_name) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(
        def, {"dy", saved_name}, {DType::kFloat32, DType::kFloat32}, {"dx"}, {DType::kFloat32}));
    Shape dy = ShapeOf(def.input(0));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, std::string("input ") + saved_name, ShapeOf(def.input(1)), dy));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dx", ShapeOf(def.output(0)), dy));
    return std::unique_ptr<Kernel>(new GradientKernel(dy.NumElements()));
  }

  Status Run(const KernelContext& context) override {
    const float* dy = context.inputs[0].As<float>();
    const float* saved = context.inputs[1].As<float>();
    float* dx = context.outputs[0].As<float>();
    ParallelFor(context.parallel, elements_, MinChunkFor(Function::kWork),
                [&](int64_t begin, int64_t end) {
                  for (int64_t i = begin; i < end; ++i) dx[i] = Function::Apply(dy[i], saved[i]);
                });
    return Status::Ok();
  }

 private:
  explicit GradientKernel(int64_t elements) : elements_(elements) {}

  const int64_t elements_;
};

}  // namespace

void RegisterActivationKernels(KernelRegistry* registry) {
  registry->Register("relu", UnaryKernel<Relu>::Create);
  registry->Register("gelu", UnaryKernel<Gelu>::Create);
  registry->Register("relu_grad", [](const KernelSetup& setup) {
    return GradientKernel<ReluGrad>::Create(setup, "y");
  });
  registry->Register("gelu_grad", [](const KernelSetup& setup) {
    return GradientKernel<GeluGrad>::Create(setup, "x");
  });
}

}  // namespace runtime
}  // namespace softwire
