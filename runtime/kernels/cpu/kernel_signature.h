// Checks of a KernelDef's inputs and outputs, done once when a kernel is created, and the
// helpers that turn its TensorDescs into Shapes. Every error is InvalidArgument and starts with
// the op type, e.g. "bias_add: input 1 (bias) has shape [3] but x's last axis is 4".
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_KERNEL_SIGNATURE_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_KERNEL_SIGNATURE_H_

#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "base/status.h"
#include "proto/plan.pb.h"
#include "proto/tensor_desc.h"  // ShapeOf and DTypeOf, which kernels use with these checks.

namespace softwire {
namespace runtime {

// OK when `def` has exactly these input and output dtypes, in order; `input_names` and
// `output_names` (same lengths) name them in errors.
Status CheckSignature(const proto::KernelDef& def, const std::vector<std::string>& input_names,
                      const std::vector<DType>& input_dtypes,
                      const std::vector<std::string>& output_names,
                      const std::vector<DType>& output_dtypes);

// InvalidArgument "<op_type>: <problem>".
Status KernelDefError(const proto::KernelDef& def, const std::string& problem);

// OK when `actual` equals `expected`; otherwise names the tensor and both shapes.
Status CheckShape(const proto::KernelDef& def, const std::string& tensor, const Shape& actual,
                  const Shape& expected);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_KERNEL_SIGNATURE_H_
