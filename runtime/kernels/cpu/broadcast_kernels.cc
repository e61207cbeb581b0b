// add, sub, mul (NumPy broadcasting) and broadcast_axes (the adjoint of a reduction), all on
// BroadcastLayout.
//
// Parallelism: the flat result range is split into chunks (one element operation each, so
// chunks hold >= kMinParallelWork elements); a chunk walks the layout's rows, starting and
// ending mid-row where it must. Vectorisation: the inner loop is specialised for the operands'
// inner strides (both 1, or one of them 0 = a broadcast scalar), which GCC vectorises.
#include <algorithm>
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/bfloat16_elementwise_kernels.h"
#include "runtime/kernels/cpu/broadcast_layout.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"

namespace softwire {
namespace runtime {
namespace {

struct AddOp {
  static float Apply(float a, float b) { return a + b; }
};
struct SubOp {
  static float Apply(float a, float b) { return a - b; }
};
struct MulOp {
  static float Apply(float a, float b) { return a * b; }
};

// c[i] = Op(a[i * a_stride], b[i * b_stride]) for strides in {0, 1}.
template <typename Op>
void BinaryRow(const float* a, int64_t a_stride, const float* b, int64_t b_stride, float* c,
               int64_t length) {
  if (a_stride == 1 && b_stride == 1) {
    for (int64_t i = 0; i < length; ++i) c[i] = Op::Apply(a[i], b[i]);
  } else if (a_stride == 1) {
    const float b_value = b[0];
    for (int64_t i = 0; i < length; ++i) c[i] = Op::Apply(a[i], b_value);
  } else if (b_stride == 1) {
    const float a_value = a[0];
    for (int64_t i = 0; i < length; ++i) c[i] = Op::Apply(a_value, b[i]);
  } else {
    std::fill(c, c + length, Op::Apply(a[0], b[0]));
  }
}

// Calls row(result_offset, row, column, length) for the pieces of whole or partial rows that
// make up the result range [begin, end).
template <typename RowFunction>
void ForEachRowSegment(const BroadcastLayout& layout, int64_t begin, int64_t end,
                       const RowFunction& row_function) {
  const int64_t inner = layout.inner();
  int64_t row = begin / inner;
  int64_t column = begin % inner;
  while (begin < end) {
    int64_t length = std::min(inner - column, end - begin);
    row_function(begin, row, column, length);
    begin += length;
    ++row;
    column = 0;
  }
}

template <typename Op>
class BinaryKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"a", "b"}, {DType::kFloat32, DType::kFloat32},
                                            {"c"}, {DType::kFloat32}));
    Shape a = ShapeOf(def.input(0));
    Shape b = ShapeOf(def.input(1));
    Shape c;
    if (!BroadcastShapes(a, b, &c)) {
      return KernelDefError(
          def, "shapes " + a.ToString() + " and " + b.ToString() + " do not broadcast");
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output c", ShapeOf(def.output(0)), c));
    return std::unique_ptr<Kernel>(new BinaryKernel(MakeBroadcastLayout(c, {a, b})));
  }

  Status Run(const KernelContext& context) override {
    const float* a = context.inputs[0].As<float>();
    const float* b = context.inputs[1].As<float>();
    float* c = context.outputs[0].As<float>();
    const int64_t a_stride = layout_.inner_stride(0);
    const int64_t b_stride = layout_.inner_stride(1);
    ParallelFor(
        context.parallel, layout_.elements(), MinChunkFor(1), [&](int64_t begin, int64_t end) {
          ForEachRowSegment(layout_, begin, end,
                            [&](int64_t offset, int64_t row, int64_t column, int64_t length) {
                              BinaryRow<Op>(a + layout_.RowOffset(0, row) + column * a_stride,
                                            a_stride,
                                            b + layout_.RowOffset(1, row) + column * b_stride,
                                            b_stride, c + offset, length);
                            });
        });
    return Status::Ok();
  }

 private:
  explicit BinaryKernel(BroadcastLayout layout) : layout_(std::move(layout)) {}

  const BroadcastLayout layout_;
};

// y (shape `shape`) = x repeated along `axes`, the axes of y that x lacks or has with extent 1.
class BroadcastAxesKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    KernelAttributes attributes(def);
    Shape y(attributes.RequiredInts("shape"));
    std::vector<int64_t> axes = attributes.RequiredInts("axes");
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    SOFTWIRE_RETURN_IF_ERROR(
        CheckSignature(def, {"x"}, {DType::kFloat32}, {"y"}, {DType::kFloat32}));
    std::vector<bool> is_axis(y.rank(), false);
    for (int64_t axis : axes) {
      int normalized = y.NormalizeAxis(axis);
      if (normalized < 0 || is_axis[normalized]) {
        return KernelDefError(def, "axis " + std::to_string(axis) +
                                       " is out of range or repeated for shape " + y.ToString());
      }
      is_axis[normalized] = true;
    }
    std::vector<int64_t> kept_dims;  // y without `axes`.
    std::vector<int64_t> unit_dims;  // y with `axes` set to 1.
    for (int axis = 0; axis < y.rank(); ++axis) {
      if (!is_axis[axis]) kept_dims.push_back(y.dim(axis));
      unit_dims.push_back(is_axis[axis] ? 1 : y.dim(axis));
    }
    Shape x = ShapeOf(def.input(0));
    if (x != Shape(kept_dims) && x != Shape(unit_dims)) {
      return KernelDefError(def, "input x has shape " + x.ToString() + " but must be " +
                                     Shape(kept_dims).ToString() + " or " +
                                     Shape(unit_dims).ToString());
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), y));
    return std::unique_ptr<Kernel>(
        new BroadcastAxesKernel(MakeBroadcastLayout(y, {Shape(unit_dims)})));
  }

  Status Run(const KernelContext& context) override {
    const float* x = context.inputs[0].As<float>();
    float* y = context.outputs[0].As<float>();
    const int64_t x_stride = layout_.inner_stride(0);
    ParallelFor(
        context.parallel, layout_.elements(), MinChunkFor(1), [&](int64_t begin, int64_t end) {
          ForEachRowSegment(layout_, begin, end,
                            [&](int64_t offset, int64_t row, int64_t column, int64_t length) {
                              const float* source =
                                  x + layout_.RowOffset(0, row) + column * x_stride;
                              if (x_stride == 1) {
                                std::copy(source, source + length, y + offset);
                              } else {
                                std::fill(y + offset, y + offset + length, source[0]);
                              }
                            });
        });
    return Status::Ok();
  }

 private:
  explicit BroadcastAxesKernel(BroadcastLayout layout) : layout_(std::move(layout)) {}

  const BroadcastLayout layout_;
};

}  // namespace

void RegisterBroadcastKernels(KernelRegistry* registry) {
  registry->Register("add", [](const KernelSetup& setup) {
    return ReadsBFloat16(setup.actor->kernel()) ? CreateBFloat16ElementwiseKernel(setup)
                                                : BinaryKernel<AddOp>::Create(setup);
  });
  registry->Register("sub", BinaryKernel<SubOp>::Create);
  registry->Register("mul", BinaryKernel<MulOp>::Create);
  registry->Register("broadcast_axes", BroadcastAxesKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
