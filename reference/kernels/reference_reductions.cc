// reduce_sum, reduce_mean and sum_to_shape: every input element is added to the output element
// its index maps to, visiting the input in row-major order.
#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

// y[index of x with the reduced axes dropped] += x[index] for every element of x; `y_shape`
// lists the kept axes only (extent-1 axes of a keepdims or sum_to_shape output change nothing
// in the layout).
void SumOver(const ReferenceTensor& x, const std::vector<bool>& reduced, std::vector<double>* y) {
  std::vector<int64_t> kept_dims;
  for (int axis = 0; axis < x.shape.rank(); ++axis) {
    if (!reduced[axis]) kept_dims.push_back(x.shape.dim(axis));
  }
  const Shape kept(kept_dims);
  for (double& value : *y) value = 0;
  for (int64_t flat = 0; flat < x.shape.NumElements(); ++flat) {
    std::vector<int64_t> index = Unravel(flat, x.shape);
    std::vector<int64_t> kept_index;
    for (int axis = 0; axis < x.shape.rank(); ++axis) {
      if (!reduced[axis]) kept_index.push_back(index[axis]);
    }
    (*y)[Ravel(kept_index, kept)] += x.values[flat];
  }
}

ReferenceKernel Reduce(bool mean) {
  return [mean](const ReferenceKernelCall& call) -> Status {
    KernelAttributes attributes(*call.def);
    std::vector<int64_t> axes = attributes.Ints("axes", {});
    const bool keepdims = attributes.Bool("keepdims", false);
    // docs/OPS.md, "Physical attributes": the logical count when the reduced axes are split.
    const int64_t divisor = mean ? attributes.Int("divisor", 0) : 0;
    SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
    if (divisor < 0) return OpError(call, "divisor must be >= 0");
    SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
    const ReferenceTensor& x = Input(call, 0);
    std::vector<bool> reduced;
    SOFTWIRE_RETURN_IF_ERROR(NormalizeAxes(call, axes, x.shape.rank(), &reduced));
    if (axes.empty()) reduced.assign(x.shape.rank(), true);  // No axes: all of them.
    std::vector<int64_t> y_dims;
    int64_t count = 1;
    for (int axis = 0; axis < x.shape.rank(); ++axis) {
      if (reduced[axis]) {
        count *= x.shape.dim(axis);
        if (keepdims) y_dims.push_back(1);
      } else {
        y_dims.push_back(x.shape.dim(axis));
      }
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, Shape(y_dims)));
    std::vector<double>& y = Output(call, 0).values;
    SumOver(x, reduced, &y);
    if (mean) {
      const int64_t by = divisor > 0 ? divisor : count;
      for (double& value : y) value /= static_cast<double>(by);
    }
    return Status::Ok();
  };
}

Status SumToShape(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  Shape y_shape(attributes.RequiredInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  const ReferenceTensor& x = Input(call, 0);
  const int leading = x.shape.rank() - y_shape.rank();
  if (leading < 0) return OpError(call, "shape has more axes than x");
  std::vector<bool> reduced(x.shape.rank());
  for (int axis = 0; axis < x.shape.rank(); ++axis) {
    if (axis < leading) {
      reduced[axis] = true;
      continue;
    }
    const int64_t target = y_shape.dim(axis - leading);
    if (target != x.shape.dim(axis) && target != 1) {
      return OpError(
          call, "shape " + y_shape.ToString() + " does not broadcast to x " + x.shape.ToString());
    }
    reduced[axis] = target != x.shape.dim(axis);
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, y_shape));
  SumOver(x, reduced, &Output(call, 0).values);
  return Status::Ok();
}

}  // namespace

void RegisterReferenceReductionKernels(ReferenceKernelTable* table) {
  table->Register("reduce_sum", Reduce(/*mean=*/false));
  table->Register("reduce_mean", Reduce(/*mean=*/true));
  table->Register("sum_to_shape", SumToShape);
}

}  // namespace reference
}  // namespace softwire
