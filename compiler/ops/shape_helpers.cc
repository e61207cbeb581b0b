#include "compiler/ops/shape_helpers.h"

#include <algorithm>

namespace softwire {
namespace compiler {

StatusOr<Shape> BroadcastInputs(const InferenceContext& context, int a, int b) {
  const Shape& left = context.input_shape(a);
  const Shape& right = context.input_shape(b);
  int rank = std::max(left.rank(), right.rank());
  std::vector<int64_t> dims(rank);
  for (int axis = -1; axis >= -rank; --axis) {
    int64_t l = -axis <= left.rank() ? left.dim(axis) : 1;
    int64_t r = -axis <= right.rank() ? right.dim(axis) : 1;
    if (l != r && l != 1 && r != 1) {
      return InvalidArgumentError(context.InputLabel(a) + " " + left.ToString() + " and " +
                                  context.InputLabel(b) + " " + right.ToString() +
                                  " do not broadcast: axis " + std::to_string(axis) + " has " +
                                  std::to_string(l) + " and " + std::to_string(r));
    }
    dims[rank + axis] = std::max(l, r);
  }
  return Shape(std::move(dims));
}

bool BroadcastsTo(const Shape& from, const Shape& to) {
  if (from.rank() > to.rank()) return false;
  for (int axis = -1; axis >= -from.rank(); --axis) {
    if (from.dim(axis) != 1 && from.dim(axis) != to.dim(axis)) return false;
  }
  return true;
}

StatusOr<std::vector<int>> NormalizeAxes(const std::vector<int64_t>& axes, int rank,
                                         const std::string& attribute, bool empty_means_all) {
  std::vector<int> normalized;
  if (axes.empty() && empty_means_all) {
    for (int axis = 0; axis < rank; ++axis) normalized.push_back(axis);
    return normalized;
  }
  for (int64_t axis : axes) {
    int64_t value = axis < 0 ? axis + rank : axis;
    if (value < 0 || value >= rank) {
      return InvalidArgumentError("attribute '" + attribute + "': axis " + std::to_string(axis) +
                                  " is out of range for rank " + std::to_string(rank));
    }
    if (std::find(normalized.begin(), normalized.end(), value) != normalized.end()) {
      return InvalidArgumentError("attribute '" + attribute + "': axis " + std::to_string(axis) +
                                  " appears twice");
    }
    normalized.push_back(static_cast<int>(value));
  }
  std::sort(normalized.begin(), normalized.end());
  return normalized;
}

Status CheckPositiveDims(const std::vector<int64_t>& dims, const std::string& attribute) {
  for (int64_t dim : dims) {
    if (dim < 1) {
      return InvalidArgumentError("attribute '" + attribute + "' has extent " +
                                  std::to_string(dim) + " in " + Shape(dims).ToString() +
                                  "; extents must be >= 1");
    }
  }
  return Status::Ok();
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& permutation) {
  std::vector<int64_t> inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) {
    inverse[permutation[i]] = static_cast<int64_t>(i);
  }
  return inverse;
}

TensorType Float32(Shape shape) {
  return TensorType{DType::kFloat32, std::move(shape)};
}

AttributeMap Attributes(const std::string& name, AttributeValue value) {
  AttributeMap attributes;
  attributes.Set(name, std::move(value));
  return attributes;
}

AttributeMap TransposeAttributes(bool transpose_a, bool transpose_b) {
  AttributeMap attributes;
  attributes.Set("transpose_a", transpose_a);
  attributes.Set("transpose_b", transpose_b);
  return attributes;
}

double TouchedBytes(const OpSignature& signature) {
  double bytes = 0;
  for (const TensorType& type : signature.inputs) bytes += static_cast<double>(type.NumBytes());
  for (const TensorType& type : signature.outputs) bytes += static_cast<double>(type.NumBytes());
  return bytes;
}

OpCost ElementwiseCost(const OpSignature& signature, double flops_per_element) {
  double elements = 0;
  for (const TensorType& type : signature.outputs) {
    elements += static_cast<double>(type.NumElements());
  }
  return OpCost{flops_per_element * elements, TouchedBytes(signature)};
}

void LocalizeOutputShape(PhysicalContext& context) {
  context.attributes.Set("shape", context.local_outputs[0].shape.dims());
}

}  // namespace compiler
}  // namespace softwire
