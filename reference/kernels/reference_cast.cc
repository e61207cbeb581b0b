// reorder (docs/OPS.md): the reference holds every tensor in its logical NCHW order whatever
// layout the plan gives its bytes (docs/LAYOUTS.md), so a reorder is a copy of the values.
//
// cast (docs/OPS.md) in double: to bfloat16, each value rounded once to the nearest bfloat16
// (ties to even, base/bfloat16.h); to float32, the value as it is (the reference keeps float32
// tensors in double, so a float32 value is never rounded, and a bfloat16 value is exact).
#include "base/bfloat16.h"
#include "base/layout.h"
#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

Status Cast(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const std::string name = attributes.RequiredString("dtype");
  // The plan runner (plan_run.cc) keeps such a cast's later values; a firing is one cast.
  attributes.Bool("first_firing_only", false);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  StatusOr<DType> to = ParseDType(name);
  if (!to.ok() || (*to != DType::kFloat32 && *to != DType::kBFloat16)) {
    return OpError(call, "dtype must be float32 or bfloat16, not '" + name + "'");
  }
  const ReferenceTensor& x = Input(call, 0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kBFloat16) {
    return OpError(call, "x must be float32 or bfloat16");
  }
  Output(call, 0).dtype = *to;
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
  std::vector<double>& y = Output(call, 0).values;
  for (size_t i = 0; i < x.values.size(); ++i) {
    y[i] = *to == DType::kBFloat16 ? RoundToBFloat16(x.values[i]) : x.values[i];
  }
  return Status::Ok();
}

Status Reorder(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const std::string name = attributes.RequiredString("layout");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 1, 1));
  StatusOr<Layout> layout = ParseLayout(name);
  if (!layout.ok()) return OpError(call, layout.status().message());
  const ReferenceTensor& x = Input(call, 0);
  if (x.shape.rank() != 4 || !LayoutFits(*layout, x.shape)) {
    return OpError(call, "x " + x.shape.ToString() + " cannot be held in layout " + name);
  }
  Output(call, 0).dtype = x.dtype;
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, x.shape));
  Output(call, 0).values = x.values;
  return Status::Ok();
}

}  // namespace

void RegisterReferenceCastKernel(ReferenceKernelTable* table) {
  table->Register("cast", Cast);
  table->Register("reorder", Reorder);
}

}  // namespace reference
}  // namespace softwire
