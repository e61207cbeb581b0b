// Helpers shared by the reference kernels: reading attributes, checking arity and shapes, and
// naive multi-index arithmetic. Errors are InvalidArgument and start with the op type.
//
// Attributes are read with proto/kernel_attributes.h, by the same rules as the cpu kernels.
#ifndef SOFTWIRE_REFERENCE_KERNELS_REFERENCE_OP_HELPERS_H_
#define SOFTWIRE_REFERENCE_KERNELS_REFERENCE_OP_HELPERS_H_

#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "base/shape.h"
#include "base/status.h"
#include "proto/kernel_attributes.h"
#include "proto/plan.pb.h"
#include "reference/kernels/reference_kernels.h"

namespace softwire {
namespace reference {

// InvalidArgument "<op_type>: <problem>".
Status OpError(const ReferenceKernelCall& call, const std::string& problem);

// OK when the call has `inputs` inputs and `outputs` outputs, with values matching their shapes.
Status CheckArity(const ReferenceKernelCall& call, size_t inputs, size_t outputs);

// OK when output `index` has shape `expected`.
Status CheckOutputShape(const ReferenceKernelCall& call, size_t index, const Shape& expected);

// The input and output tensors of a call.
inline const ReferenceTensor& Input(const ReferenceKernelCall& call, size_t index) {
  return *call.inputs[index];
}
inline ReferenceTensor& Output(const ReferenceKernelCall& call, size_t index) {
  return (*call.outputs)[index];
}

// The multi-index of row-major element `flat` of `shape`.
std::vector<int64_t> Unravel(int64_t flat, const Shape& shape);

// The row-major position of `index` in `shape`.
int64_t Ravel(const std::vector<int64_t>& index, const Shape& shape);
// The same for a braced index ({n, c, h, w}) without building a vector: the reference's
// innermost loops (convolution taps, pooling windows) call it per element.
int64_t Ravel(std::initializer_list<int64_t> index, const Shape& shape);

// The position in `operand` (which broadcasts to the result) of the result element at
// `result_index`: operand axes are aligned at the end, extent-1 axes read index 0.
int64_t BroadcastSource(const std::vector<int64_t>& result_index, const Shape& operand);

// NumPy broadcast of two shapes; false when they do not broadcast.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* result);

// Each axis of `axes` normalised into [0, rank) (negative counts from the end); an error for an
// axis out of range or given twice.
Status NormalizeAxes(const ReferenceKernelCall& call, const std::vector<int64_t>& axes, int rank,
                     std::vector<bool>* is_axis);

// The shape without its last axis (rank >= 1).
Shape LeadingShape(const Shape& shape);

}  // namespace reference
}  // namespace softwire

#endif  // SOFTWIRE_REFERENCE_KERNELS_REFERENCE_OP_HELPERS_H_
