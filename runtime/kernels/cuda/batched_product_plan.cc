#include "runtime/kernels/cuda/batched_product_plan.h"

namespace softwire {
namespace runtime {
namespace {

// Per axis of an input as the kernel sees it (`logical`), its stride in the bytes it reads:
// row-major, or with `perm` (x.shape[perm[i]] = logical.shape[i]) x's strides.
std::vector<int64_t> StridesOf(const Shape& logical, const std::vector<int64_t>& perm) {
  const int rank = logical.rank();
  std::vector<int64_t> stored(static_cast<size_t>(rank));
  for (int axis = 0; axis < rank; ++axis) {
    stored[perm.empty() ? axis : perm[axis]] = logical.dim(axis);
  }
  std::vector<int64_t> stored_strides(static_cast<size_t>(rank), 1);
  for (int axis = rank - 2; axis >= 0; --axis) {
    stored_strides[axis] = stored_strides[axis + 1] * stored[axis + 1];
  }
  std::vector<int64_t> strides(static_cast<size_t>(rank));
  for (int axis = 0; axis < rank; ++axis) {
    strides[axis] = stored_strides[perm.empty() ? axis : perm[axis]];
  }
  return strides;
}

// A batch axis (possibly merged): its extent and the strides of a, b and c along it.
struct BatchAxis {
  int64_t extent = 1;
  int64_t a = 0;
  int64_t b = 0;
  int64_t c = 0;
};

// The axes without extent-1 ones, each merged into the one before it where all three strides
// of that one step exactly over it.
std::vector<BatchAxis> Merged(const std::vector<BatchAxis>& axes) {
  std::vector<BatchAxis> merged;
  for (const BatchAxis& axis : axes) {
    if (axis.extent == 1) continue;
    if (!merged.empty()) {
      BatchAxis& outer = merged.back();
      if (outer.a == axis.extent * axis.a && outer.b == axis.extent * axis.b &&
          outer.c == axis.extent * axis.c) {
        outer.extent *= axis.extent;
        outer.a = axis.a;
        outer.b = axis.b;
        outer.c = axis.c;
        continue;
      }
    }
    merged.push_back(axis);
  }
  return merged;
}

}  // namespace

BatchedProductPlan PlanBatchedProduct(const Shape& a, const Shape& b,
                                      const std::vector<int64_t>& a_perm,
                                      const std::vector<int64_t>& b_perm, int64_t m, int64_t n) {
  const std::vector<int64_t> a_strides = StridesOf(a, a_perm);
  const std::vector<int64_t> b_strides = StridesOf(b, b_perm);
  const int rank = a.rank();
  BatchedProductPlan plan;
  plan.lda = a_strides[static_cast<size_t>(rank - 2)];
  plan.ldb = b_strides[static_cast<size_t>(rank - 2)];
  std::vector<BatchAxis> axes(static_cast<size_t>(rank - 2));
  int64_t c_stride = m * n;
  for (int axis = rank - 3; axis >= 0; --axis) {
    axes[axis] = BatchAxis{a.dim(axis), a_strides[axis], b_strides[axis], c_stride};
    c_stride *= a.dim(axis);
  }
  const std::vector<BatchAxis> merged = Merged(axes);
  if (merged.empty()) return plan;  // One product: one call of batch 1.
  size_t longest = 0;
  for (size_t axis = 1; axis < merged.size(); ++axis) {
    if (merged[axis].extent >= merged[longest].extent) longest = axis;
  }
  plan.batch = merged[longest].extent;
  plan.a_stride = merged[longest].a;
  plan.b_stride = merged[longest].b;
  plan.c_stride = merged[longest].c;
  std::vector<BatchAxis> outer;
  int64_t calls = 1;
  for (size_t axis = 0; axis < merged.size(); ++axis) {
    if (axis == longest) continue;
    outer.push_back(merged[axis]);
    calls *= merged[axis].extent;
  }
  plan.calls.clear();
  for (int64_t index = 0; index < calls; ++index) {
    ProductCall call;
    int64_t rest = index;
    for (int axis = static_cast<int>(outer.size()) - 1; axis >= 0; --axis) {
      const int64_t coordinate = rest % outer[axis].extent;
      rest /= outer[axis].extent;
      call.a_offset += coordinate * outer[axis].a;
      call.b_offset += coordinate * outer[axis].b;
      call.c_offset += coordinate * outer[axis].c;
    }
    plan.calls.push_back(call);
  }
  return plan;
}

}  // namespace runtime
}  // namespace softwire
