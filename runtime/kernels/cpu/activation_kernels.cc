// relu, relu_grad, gelu (tanh approximation) and gelu_grad, with the per-element functions of
// elementwise_functions.h.
//
// Parallelism: flat chunks; gelu's ~20 operations per element let smaller tensors split.
// Vectorisation: branch-free loops; gelu uses vector_math.h's polynomial Exp so it vectorises.
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bfloat16_elementwise_kernels.h"
#include "runtime/kernels/cpu/elementwise_functions.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

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
  // bfloat16 operands (activations between convolutions): bfloat16_elementwise_kernels.h.
  registry->Register("relu", [](const KernelSetup& setup) {
    return ReadsBFloat16(setup.actor->kernel()) ? CreateBFloat16ElementwiseKernel(setup)
                                                : UnaryKernel<Relu>::Create(setup);
  });
  registry->Register("gelu", UnaryKernel<Gelu>::Create);
  registry->Register("relu_grad", [](const KernelSetup& setup) {
    if (ReadsBFloat16(setup.actor->kernel())) return CreateBFloat16ElementwiseKernel(setup);
    return GradientKernel<ReluGrad>::Create(setup, "y");
  });
  registry->Register("gelu_grad", [](const KernelSetup& setup) {
    return GradientKernel<GeluGrad>::Create(setup, "x");
  });
}

}  // namespace runtime
}  // namespace softwire
