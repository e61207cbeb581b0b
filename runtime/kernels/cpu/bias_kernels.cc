// bias_add (x [..., C] + bias [C]) and bias_add_grad (column sums of dy [..., C]).
//
// Parallelism: bias_add over rows. bias_add_grad over columns, as docs/OPS.md requires: each
// thread owns a range of dbias and sums every row into it, so no accumulator is shared and the
// result does not depend on the thread count. Vectorisation: both inner loops run along a
// contiguous row.
#include <algorithm>
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

// Rows and channels of a [..., C] tensor, rank >= 1.
struct RowsByChannels {
  int64_t rows = 0;
  int64_t channels = 0;
};

Status ReadRowsByChannels(const proto::KernelDef& def, const Shape& shape, const char* name,
                          RowsByChannels* layout) {
  if (shape.rank() < 1) {
    return KernelDefError(def, std::string(name) + " must have rank >= 1, not " + shape.ToString());
  }
  layout->channels = shape.dim(-1);
  layout->rows = shape.NumElements(0, shape.rank() - 1);
  return Status::Ok();
}

class BiasAddKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x", "bias"}, {DType::kFloat32, DType::kFloat32},
                                            {"y"}, {DType::kFloat32}));
    Shape x = ShapeOf(def.input(0));
    RowsByChannels layout;
    SOFTWIRE_RETURN_IF_ERROR(ReadRowsByChannels(def, x, "x", &layout));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, "input bias", ShapeOf(def.input(1)), Shape({layout.channels})));
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), x));
    return std::unique_ptr<Kernel>(new BiasAddKernel(layout));
  }

  Status Run(const KernelContext& context) override {
    const float* x = context.inputs[0].As<float>();
    const float* bias = context.inputs[1].As<float>();
    float* y = context.outputs[0].As<float>();
    const int64_t channels = layout_.channels;
    ParallelFor(context.parallel, layout_.rows, MinChunkFor(channels),
                [&](int64_t begin, int64_t end) {
                  for (int64_t row = begin; row < end; ++row) {
                    const float* x_row = x + row * channels;
                    float* y_row = y + row * channels;
                    for (int64_t c = 0; c < channels; ++c) y_row[c] = x_row[c] + bias[c];
                  }
                });
    return Status::Ok();
  }

 private:
  explicit BiasAddKernel(RowsByChannels layout) : layout_(layout) {}

  const RowsByChannels layout_;
};

class BiasAddGradKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(
        CheckSignature(def, {"dy"}, {DType::kFloat32}, {"dbias"}, {DType::kFloat32}));
    RowsByChannels layout;
    SOFTWIRE_RETURN_IF_ERROR(ReadRowsByChannels(def, ShapeOf(def.input(0)), "dy", &layout));
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, "output dbias", ShapeOf(def.output(0)), Shape({layout.channels})));
    return std::unique_ptr<Kernel>(new BiasAddGradKernel(layout));
  }

  Status Run(const KernelContext& context) override {
    const float* dy = context.inputs[0].As<float>();
    float* dbias = context.outputs[0].As<float>();
    const int64_t channels = layout_.channels;
    const int64_t rows = layout_.rows;
    ParallelFor(context.parallel, channels, MinChunkFor(rows), [&](int64_t begin, int64_t end) {
      std::fill(dbias + begin, dbias + end, 0.0f);
      for (int64_t row = 0; row < rows; ++row) {
        const float* dy_row = dy + row * channels;
        for (int64_t c = begin; c < end; ++c) dbias[c] += dy_row[c];
      }
    });
    return Status::Ok();
  }

 private:
  explicit BiasAddGradKernel(RowsByChannels layout) : layout_(layout) {}

  const RowsByChannels layout_;
};

}  // namespace

void RegisterBiasKernels(KernelRegistry* registry) {
  registry->Register("bias_add", BiasAddKernel::Create);
  registry->Register("bias_add_grad", BiasAddGradKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
