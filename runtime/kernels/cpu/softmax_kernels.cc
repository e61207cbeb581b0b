// softmax (optionally causal) and softmax_grad, over the last axis.
//
// Parallelism: over rows; a row costs about 10 operations per element (max, exp, sum, scale).
// Vectorisation: the row passes use vector_math.h (16-lane reductions, polynomial Exp).
// Causal: in the trailing [T, T] matrices row i keeps columns 0..i; the rest are written as 0
// and take no part in the maximum or the sum.
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

constexpr int64_t kSoftmaxWork = 10;

// y[0..valid) = softmax(x[0..valid)), y[valid..length) = 0.
void SoftmaxRow(const float* x, float* y, int64_t valid, int64_t length) {
  if (valid > 0) {
    const float maximum = RowMax(x, valid);
    for (int64_t j = 0; j < valid; ++j) y[j] = Exp(x[j] - maximum);
    const float inverse_sum = 1.0f / RowSum(y, valid);
    for (int64_t j = 0; j < valid; ++j) y[j] *= inverse_sum;
  }
  std::fill(y + valid, y + length, 0.0f);
}

class SoftmaxKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    bool causal = attributes.Bool("causal", false);
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    SOFTWIRE_RETURN_IF_ERROR(
        CheckSignature(def, {"x"}, {DType::kFloat32}, {"y"}, {DType::kFloat32}));
    Shape x = ShapeOf(def.input(0));
    if (x.rank() < 1) return KernelDefError(def, "x must have rank >= 1, not []");
    if (causal && (x.rank() < 2 || x.dim(-1) != x.dim(-2))) {
      return KernelDefError(def,
                            "causal softmax needs x of shape [..., T, T], not " + x.ToString());
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), x));
    return std::unique_ptr<Kernel>(
        new SoftmaxKernel(causal, x.NumElements(0, x.rank() - 1), x.dim(-1)));
  }

  Status Run(const KernelContext& context) override {
    const float* x = context.inputs[0].As<float>();
    float* y = context.outputs[0].As<float>();
    const int64_t length = length_;
    ParallelFor(context.parallel, rows_, MinChunkFor(kSoftmaxWork * length),
                [&](int64_t begin, int64_t end) {
                  for (int64_t row = begin; row < end; ++row) {
                    int64_t valid = causal_ ? row % length + 1 : length;
                    SoftmaxRow(x + row * length, y + row * length, valid, length);
                  }
                });
    return Status::Ok();
  }

 private:
  SoftmaxKernel(bool causal, int64_t rows, int64_t length)
      : causal_(causal), rows_(rows), length_(length) {}

  const bool causal_;
  const int64_t rows_;
  const int64_t length_;
};

// dx = y * (dy - sum(dy * y)) per row.
class SoftmaxGradKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"dy", "y"}, {DType::kFloat32, DType::kFloat32},
                                            {"dx"}, {DType::kFloat32}));
    Shape dy = ShapeOf(def.input(0));
    if (dy.rank() < 1) return KernelDefError(def, "dy must have rank >= 1, not []");
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input y", ShapeOf(def.input(1)), dy));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output dx", ShapeOf(def.output(0)), dy));
    return std::unique_ptr<Kernel>(
        new SoftmaxGradKernel(dy.NumElements(0, dy.rank() - 1), dy.dim(-1)));
  }

  Status Run(const KernelContext& context) override {
    const float* dy = context.inputs[0].As<float>();
    const float* y = context.inputs[1].As<float>();
    float* dx = context.outputs[0].As<float>();
    const int64_t length = length_;
    ParallelFor(context.parallel, rows_, MinChunkFor(4 * length), [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const float* dy_row = dy + row * length;
        const float* y_row = y + row * length;
        float* dx_row = dx + row * length;
        const float dot = RowDot(dy_row, y_row, length);
        for (int64_t j = 0; j < length; ++j) dx_row[j] = y_row[j] * (dy_row[j] - dot);
      }
    });
    return Status::Ok();
  }

 private:
  SoftmaxGradKernel(int64_t rows, int64_t length) : rows_(rows), length_(length) {}

  const int64_t rows_;
  const int64_t length_;
};

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry* registry) {
  registry->Register("softmax", SoftmaxKernel::Create);
  registry->Register("softmax_grad", SoftmaxGradKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
