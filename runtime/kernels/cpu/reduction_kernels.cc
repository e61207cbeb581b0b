// reduce_sum, reduce_mean and sum_to_shape: sums of x over a set of axes.
//
// A ReductionPlan, built once, drops axes of extent 1 and merges neighbouring axes that are
// both reduced or both kept. Then:
// - every axis reduced (a total sum): the input is cut into at most kMaxBlocks fixed blocks
//   summed in parallel, and the block sums are added in order. Block boundaries depend only on
//   the size, so the result does not depend on the thread count.
// - the last axis reduced: each output is a sum of contiguous runs (16-lane RowSum).
// - the last axis kept: each output row is a sum of contiguous input rows, added element-wise
//   (vectorised along the row); the chunks of the flat output may split rows, so a reduction to
//   a single row (bias_add_grad's shape) still spreads over threads by columns.
// Outputs are parallel over disjoint ranges, so no accumulator is shared. Every output sums its
// terms in row-major order of the reduced axes.
#include <algorithm>
#include <memory>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/broadcast_layout.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"
#include "runtime/kernels/cpu/parallel_for.h"
#include "runtime/kernels/cpu/vector_math.h"

namespace softwire {
namespace runtime {
namespace {

// Mixed-radix axes with input strides: maps a flat index over `dims` to an input offset.
struct AxisGroup {
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;

  int64_t count() const {
    int64_t product = 1;
    for (int64_t extent : dims) product *= extent;
    return product;
  }
  int64_t Offset(int64_t index) const {
    int64_t offset = 0;
    for (int axis = static_cast<int>(dims.size()) - 1; axis >= 0 && index > 0; --axis) {
      offset += (index % dims[axis]) * strides[axis];
      index /= dims[axis];
    }
    return offset;
  }
};

class ReductionPlan {
 public:
  // `reduced[axis]` says whether axis of `input` is summed over.
  ReductionPlan(const Shape& input, const std::vector<bool>& reduced) {
    std::vector<int64_t> dims;
    std::vector<bool> flags;
    for (int axis = 0; axis < input.rank(); ++axis) {
      if (input.dim(axis) == 1) continue;
      if (!dims.empty() && flags.back() == reduced[axis]) {
        dims.back() *= input.dim(axis);
      } else {
        dims.push_back(input.dim(axis));
        flags.push_back(reduced[axis]);
      }
    }
    if (dims.empty()) {  // A single element: a kept axis of extent 1.
      dims.push_back(1);
      flags.push_back(false);
    }
    std::vector<int64_t> strides(dims.size());
    int64_t stride = 1;
    for (int axis = static_cast<int>(dims.size()) - 1; axis >= 0; --axis) {
      strides[axis] = stride;
      stride *= dims[axis];
    }
    last_reduced_ = flags.back();
    run_ = dims.back();
    for (size_t axis = 0; axis + 1 < dims.size(); ++axis) {
      AxisGroup& group = flags[axis] ? outer_reduced_ : outer_kept_;
      group.dims.push_back(dims[axis]);
      group.strides.push_back(strides[axis]);
    }
    total_ = last_reduced_ && outer_kept_.dims.empty();
  }

  // Sums into y; y has one element per kept index, in row-major order.
  void Run(ParallelRunner* parallel, const float* x, float* y, float scale) const {
    if (total_) {
      y[0] = TotalSum(parallel, x, outer_reduced_.count() * run_) * scale;
    } else if (last_reduced_) {
      SumRuns(parallel, x, y, scale);
    } else {
      SumRows(parallel, x, y, scale);
    }
  }

 private:
  static constexpr int64_t kMaxBlocks = 64;

  static float TotalSum(ParallelRunner* parallel, const float* x, int64_t count) {
    const int64_t block = std::max(kMinParallelWork, (count + kMaxBlocks - 1) / kMaxBlocks);
    const int64_t blocks = (count + block - 1) / block;
    float partial[kMaxBlocks] = {};
    ParallelFor(parallel, blocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        partial[b] = RowSum(x + b * block, std::min(block, count - b * block));
      }
    });
    float sum = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) sum += partial[b];
    return sum;
  }

  // Last axis reduced: y[o] = sum over outer reduced q of RowSum(run at (o, q)).
  void SumRuns(ParallelRunner* parallel, const float* x, float* y, float scale) const {
    const int64_t runs = outer_reduced_.count();
    ParallelFor(parallel, outer_kept_.count(), MinChunkFor(runs * run_),
                [&](int64_t begin, int64_t end) {
                  for (int64_t o = begin; o < end; ++o) {
                    const float* base = x + outer_kept_.Offset(o);
                    float sum = 0.0f;
                    for (int64_t q = 0; q < runs; ++q) {
                      sum += RowSum(base + outer_reduced_.Offset(q), run_);
                    }
                    y[o] = sum * scale;
                  }
                });
  }

  // Last axis kept: y[o, :] = sum over reduced q of x[(o, q), :].
  void SumRows(ParallelRunner* parallel, const float* x, float* y, float scale) const {
    const int64_t terms = outer_reduced_.count();
    const int64_t row_length = run_;
    ParallelFor(parallel, outer_kept_.count() * row_length, MinChunkFor(terms),
                [&](int64_t begin, int64_t end) {
                  while (begin < end) {
                    const int64_t row = begin / row_length;
                    const int64_t column = begin % row_length;
                    const int64_t length = std::min(row_length - column, end - begin);
                    const float* base = x + outer_kept_.Offset(row) + column;
                    float* out = y + begin;
                    std::fill(out, out + length, 0.0f);
                    for (int64_t q = 0; q < terms; ++q) {
                      const float* term = base + outer_reduced_.Offset(q);
                      for (int64_t i = 0; i < length; ++i) out[i] += term[i];
                    }
                    if (scale != 1.0f) {
                      for (int64_t i = 0; i < length; ++i) out[i] *= scale;
                    }
                    begin += length;
                  }
                });
  }

  bool total_ = false;
  bool last_reduced_ = false;
  int64_t run_ = 1;          // Extent of the last merged axis.
  AxisGroup outer_kept_;     // Kept merged axes before the last.
  AxisGroup outer_reduced_;  // Reduced merged axes before the last.
};

class ReductionKernel final : public Kernel {
 public:
  ReductionKernel(ReductionPlan plan, float scale) : plan_(std::move(plan)), scale_(scale) {}

  Status Run(const KernelContext& context) override {
    plan_.Run(context.parallel, context.inputs[0].As<float>(), context.outputs[0].As<float>(),
              scale_);
    return Status::Ok();
  }

 private:
  const ReductionPlan plan_;
  const float scale_;
};

// reduce_sum (mean = false) and reduce_mean (mean = true).
StatusOr<std::unique_ptr<Kernel>> CreateReduceKernel(const KernelSetup& setup, bool mean) {
  const proto::KernelDef& def = setup.actor->kernel();
  KernelAttributes attributes(def);
  std::vector<int64_t> axes = attributes.Ints("axes", {});
  bool keepdims = attributes.Bool("keepdims", false);
  // Physical attribute (docs/OPS.md): the logical count of reduced elements, when the reduced
  // axes are split across devices and this part's mean is a partial sum of the whole's.
  int64_t divisor = mean ? attributes.Int("divisor", 0) : 0;
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  if (divisor < 0) return KernelDefError(def, "divisor must be >= 0");
  SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x"}, {DType::kFloat32}, {"y"}, {DType::kFloat32}));
  Shape x = ShapeOf(def.input(0));
  std::vector<bool> reduced(x.rank(), axes.empty());
  for (int64_t axis : axes) {
    int normalized = x.NormalizeAxis(axis);
    if (normalized < 0 || reduced[normalized]) {
      return KernelDefError(def, "axis " + std::to_string(axis) +
                                     " is out of range or repeated for x " + x.ToString());
    }
    reduced[normalized] = true;
  }
  std::vector<int64_t> y_dims;
  int64_t reduced_count = 1;
  for (int axis = 0; axis < x.rank(); ++axis) {
    if (reduced[axis]) {
      reduced_count *= x.dim(axis);
      if (keepdims) y_dims.push_back(1);
    } else {
      y_dims.push_back(x.dim(axis));
    }
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), Shape(y_dims)));
  const int64_t count = divisor > 0 ? divisor : reduced_count;
  float scale = mean ? 1.0f / static_cast<float>(count) : 1.0f;
  return std::unique_ptr<Kernel>(new ReductionKernel(ReductionPlan(x, reduced), scale));
}

// Sums x over its leading axes beyond `shape`'s rank and over the axes where `shape` has 1.
StatusOr<std::unique_ptr<Kernel>> CreateSumToShapeKernel(const KernelSetup& setup) {
  const proto::KernelDef& def = setup.actor->kernel();
  KernelAttributes attributes(def);
  Shape y(attributes.RequiredInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {"x"}, {DType::kFloat32}, {"y"}, {DType::kFloat32}));
  Shape x = ShapeOf(def.input(0));
  if (!BroadcastsTo(y, x)) {
    return KernelDefError(def,
                          "shape " + y.ToString() + " does not broadcast to x " + x.ToString());
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckShape(def, "output y", ShapeOf(def.output(0)), y));
  const int leading = x.rank() - y.rank();
  std::vector<bool> reduced(x.rank());
  for (int axis = 0; axis < x.rank(); ++axis) {
    reduced[axis] = axis < leading || y.dim(axis - leading) != x.dim(axis);
  }
  return std::unique_ptr<Kernel>(new ReductionKernel(ReductionPlan(x, reduced), 1.0f));
}

}  // namespace

void RegisterReductionKernels(KernelRegistry* registry) {
  registry->Register("reduce_sum", [](const KernelSetup& setup) {
    return CreateReduceKernel(setup, /*mean=*/false);
  });
  registry->Register("reduce_mean", [](const KernelSetup& setup) {
    return CreateReduceKernel(setup, /*mean=*/true);
  });
  registry->Register("sum_to_shape", CreateSumToShapeKernel);
}

}  // namespace runtime
}  // namespace softwire
