#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {

Status OpError(const ReferenceKernelCall& call, const std::string& problem) {
  return InvalidArgumentError(call.def->op_type() + ": " + problem);
}

Status CheckArity(const ReferenceKernelCall& call, size_t inputs, size_t outputs) {
  if (call.inputs.size() != inputs || call.outputs == nullptr || call.outputs->size() != outputs) {
    return OpError(call, "expects " + std::to_string(inputs) + " inputs and " +
                             std::to_string(outputs) + " outputs");
  }
  for (size_t index = 0; index < inputs; ++index) {
    const ReferenceTensor* input = call.inputs[index];
    if (input == nullptr ||
        static_cast<int64_t>(input->values.size()) != input->shape.NumElements()) {
      return OpError(call, "input " + std::to_string(index) + " is missing or mis-sized");
    }
  }
  return Status::Ok();
}

Status CheckOutputShape(const ReferenceKernelCall& call, size_t index, const Shape& expected) {
  ReferenceTensor& output = Output(call, index);
  if (output.shape != expected ||
      static_cast<int64_t>(output.values.size()) != expected.NumElements()) {
    return OpError(call, "output " + std::to_string(index) + " has shape " +
                             output.shape.ToString() + " but must be " + expected.ToString());
  }
  return Status::Ok();
}

std::vector<int64_t> Unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.rank());
  for (int axis = shape.rank() - 1; axis >= 0; --axis) {
    index[axis] = flat % shape.dim(axis);
    flat /= shape.dim(axis);
  }
  return index;
}

int64_t Ravel(const std::vector<int64_t>& index, const Shape& shape) {
  int64_t flat = 0;
  for (int axis = 0; axis < shape.rank(); ++axis) flat = flat * shape.dim(axis) + index[axis];
  return flat;
}

int64_t Ravel(std::initializer_list<int64_t> index, const Shape& shape) {
  int64_t flat = 0;
  int axis = 0;
  for (int64_t position : index) flat = flat * shape.dim(axis++) + position;
  return flat;
}

int64_t BroadcastSource(const std::vector<int64_t>& result_index, const Shape& operand) {
  const int offset = static_cast<int>(result_index.size()) - operand.rank();
  int64_t flat = 0;
  for (int axis = 0; axis < operand.rank(); ++axis) {
    int64_t position = operand.dim(axis) == 1 ? 0 : result_index[axis + offset];
    flat = flat * operand.dim(axis) + position;
  }
  return flat;
}

bool BroadcastShapes(const Shape& a, const Shape& b, Shape* result) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int axis = 0; axis < rank; ++axis) {
    int a_axis = axis - (rank - a.rank());
    int b_axis = axis - (rank - b.rank());
    int64_t a_extent = a_axis < 0 ? 1 : a.dim(a_axis);
    int64_t b_extent = b_axis < 0 ? 1 : b.dim(b_axis);
    if (a_extent != b_extent && a_extent != 1 && b_extent != 1) return false;
    dims[axis] = a_extent == 1 ? b_extent : a_extent;
  }
  *result = Shape(dims);
  return true;
}

Status NormalizeAxes(const ReferenceKernelCall& call, const std::vector<int64_t>& axes, int rank,
                     std::vector<bool>* is_axis) {
  is_axis->assign(rank, false);
  for (int64_t axis : axes) {
    int64_t normalized = axis < 0 ? axis + rank : axis;
    if (normalized < 0 || normalized >= rank || (*is_axis)[normalized]) {
      return OpError(call, "axis " + std::to_string(axis) +
                               " is out of range or repeated for rank " + std::to_string(rank));
    }
    (*is_axis)[normalized] = true;
  }
  return Status::Ok();
}

Shape LeadingShape(const Shape& shape) {
  return Shape(std::vector<int64_t>(shape.dims().begin(), shape.dims().end() - 1));
}

}  // namespace reference
}  // namespace softwire
