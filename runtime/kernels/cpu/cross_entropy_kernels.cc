// softmax_cross_entropy, softmax_cross_entropy_grad and accuracy: logits [..., V] against int32
// labels [...] in [0, V).
//
// Labels are range-checked first, serially (one compare per row), so a bad label fails the
// firing before any output is written. Parallelism: over rows. Vectorisation: the row passes use
// vector_math.h; the log of each row's sum is one scalar std::log.
#include <atomic>
#include <cmath>
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/index_check.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"
#include "runtime/kernels/cpu/vector_math.h"

namespace softwire {
namespace runtime {
namespace {

constexpr int64_t kCrossEntropyWork = 10;

// Rows and classes of logits [..., V] with labels [...].
struct LogitsLayout {
  int64_t rows = 0;
  int64_t classes = 0;
};

Status ReadLogitsLayout(const proto::KernelDef& def, int logits_input, int labels_input,
                        LogitsLayout* layout) {
  Shape logits = ShapeOf(def.input(logits_input));
  if (logits.rank() < 1) return KernelDefError(def, "logits must have rank >= 1, not []");
  Shape rows(std::vector<int64_t>(logits.dims().begin(), logits.dims().end() - 1));
  SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "input labels", ShapeOf(def.input(labels_input)), rows));
  layout->rows = rows.NumElements();
  layout->classes = logits.dim(-1);
  return Status::Ok();
}

class SoftmaxCrossEntropyKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(
        def, {"logits", "labels"}, {DType::kFloat32, DType::kInt32}, {"loss"}, {DType::kFloat32}));
    LogitsLayout layout;
    SOFTWIRE_RETURN_IF_ERROR(ReadLogitsLayout(def, 0, 1, &layout));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, "output loss", ShapeOf(def.output(0)), ShapeOf(def.input(1))));
    return std::unique_ptr<Kernel>(new SoftmaxCrossEntropyKernel(layout));
  }

  Status Run(const KernelContext& context) override {
    const float* logits = context.inputs[0].As<float>();
    const int32_t* labels = context.inputs[1].As<int32_t>();
    float* loss = context.outputs[0].As<float>();
    const int64_t classes = layout_.classes;
    SOFTWIRE_RETURN_IF_ERROR(
        CheckIndices("softmax_cross_entropy", "labels", labels, layout_.rows, classes));
    ParallelFor(context.parallel, layout_.rows, MinChunkFor(kCrossEntropyWork * classes),
                [&](int64_t begin, int64_t end) {
                  for (int64_t row = begin; row < end; ++row) {
                    const float* x = logits + row * classes;
                    const float maximum = RowMax(x, classes);
                    const float log_sum = std::log(RowSumExp(x, classes, maximum));
                    loss[row] = (log_sum + maximum) - x[labels[row]];
                  }
                });
    return Status::Ok();
  }

 private:
  explicit SoftmaxCrossEntropyKernel(LogitsLayout layout) : layout_(layout) {}

  const LogitsLayout layout_;
};

// dlogits[r, v] = dloss[r] * (softmax(logits[r])[v] - (v == labels[r])).
class SoftmaxCrossEntropyGradKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"dloss", "logits", "labels"},
                                            {DType::kFloat32, DType::kFloat32, DType::kInt32},
                                            {"dlogits"}, {DType::kFloat32}));
    LogitsLayout layout;
    SOFTWIRE_RETURN_IF_ERROR(ReadLogitsLayout(def, 1, 2, &layout));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, "input dloss", ShapeOf(def.input(0)), ShapeOf(def.input(2))));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, "output dlogits", ShapeOf(def.output(0)), ShapeOf(def.input(1))));
    return std::unique_ptr<Kernel>(new SoftmaxCrossEntropyGradKernel(layout));
  }

  Status Run(const KernelContext& context) override {
    const float* dloss = context.inputs[0].As<float>();
    const float* logits = context.inputs[1].As<float>();
    const int32_t* labels = context.inputs[2].As<int32_t>();
    float* dlogits = context.outputs[0].As<float>();
    const int64_t classes = layout_.classes;
    SOFTWIRE_RETURN_IF_ERROR(
        CheckIndices("softmax_cross_entropy_grad", "labels", labels, layout_.rows, classes));
    ParallelFor(context.parallel, layout_.rows, MinChunkFor(kCrossEntropyWork * classes),
                [&](int64_t begin, int64_t end) {
                  for (int64_t row = begin; row < end; ++row) {
                    const float* x = logits + row * classes;
                    float* dx = dlogits + row * classes;
                    const float maximum = RowMax(x, classes);
                    const float scale = dloss[row] / RowSumExp(x, classes, maximum);
                    for (int64_t v = 0; v < classes; ++v) dx[v] = scale * Exp(x[v] - maximum);
                    dx[labels[row]] -= dloss[row];
                  }
                });
    return Status::Ok();
  }

 private:
  explicit SoftmaxCrossEntropyGradKernel(LogitsLayout layout) : layout_(layout) {}

  const LogitsLayout layout_;
};

// The fraction of rows whose first maximum is at the label.
class AccuracyKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    // Physical attribute (docs/OPS.md): the logical row count when the rows are split across
    // devices, so that this part's value is a partial sum of the whole's accuracy.
    const int64_t divisor = attributes.Int("divisor", 0);
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (divisor < 0) return KernelDefError(def, "divisor must be >= 0");
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(
        def, {"logits", "labels"}, {DType::kFloat32, DType::kInt32}, {"y"}, {DType::kFloat32}));
    LogitsLayout layout;
    SOFTWIRE_RETURN_IF_ERROR(ReadLogitsLayout(def, 0, 1, &layout));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), Shape()));
    return std::unique_ptr<Kernel>(new AccuracyKernel(layout, divisor > 0 ? divisor : layout.rows));
  }

  Status Run(const KernelContext& context) override {
    const float* logits = context.inputs[0].As<float>();
    const int32_t* labels = context.inputs[1].As<int32_t>();
    const int64_t classes = layout_.classes;
    SOFTWIRE_RETURN_IF_ERROR(CheckIndices("accuracy", "labels", labels, layout_.rows, classes));
    std::atomic<int64_t> correct{0};
    ParallelFor(context.parallel, layout_.rows, MinChunkFor(classes),
                [&](int64_t begin, int64_t end) {
                  int64_t chunk_correct = 0;
                  for (int64_t row = begin; row < end; ++row) {
                    const float* x = logits + row * classes;
                    int64_t best = 0;
                    for (int64_t v = 1; v < classes; ++v) {
                      if (x[v] > x[best]) best = v;
                    }
                    chunk_correct += best == labels[row] ? 1 : 0;
                  }
                  correct.fetch_add(chunk_correct, std::memory_order_relaxed);
                });
    float* y = context.outputs[0].As<float>();
    y[0] = divisor_ == 0 ? 0.0f
                         : static_cast<float>(static_cast<double>(correct.load()) /
                                              static_cast<double>(divisor_));
    return Status::Ok();
  }

 private:
  AccuracyKernel(LogitsLayout layout, int64_t divisor) : layout_(layout), divisor_(divisor) {}

  const LogitsLayout layout_;
  const int64_t divisor_;  // The rows' logical count: this part's rows, or the attribute.
};

}  // namespace

void RegisterCrossEntropyKernels(KernelRegistry* registry) {
  registry->Register("softmax_cross_entropy", SoftmaxCrossEntropyKernel::Create);
  registry->Register("softmax_cross_entropy_grad", SoftmaxCrossEntropyGradKernel::Create);
  registry->Register("accuracy", AccuracyKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
