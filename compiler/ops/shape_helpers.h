// Shape arithmetic shared by the op families' inference and gradient rules. Errors are
// InvalidArgument naming the input or attribute at fault; callers add the op's name.
#ifndef SOFTWIRE_COMPILER_OPS_SHAPE_HELPERS_H_
#define SOFTWIRE_COMPILER_OPS_SHAPE_HELPERS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/shape.h"
#include "base/status.h"
#include "compiler/ir/attribute_map.h"
#include "compiler/ops/op_definition.h"

namespace softwire {
namespace compiler {

// NumPy broadcasting of inputs `a` and `b` of `context`.
StatusOr<Shape> BroadcastInputs(const InferenceContext& context, int a, int b);

// True when `from` broadcasts to exactly `to`.
bool BroadcastsTo(const Shape& from, const Shape& to);

// Axes of attribute `attribute` mapped into [0, rank) and sorted; an empty list means every
// axis when `empty_means_all`. Fails on an axis out of range or given twice.
StatusOr<std::vector<int>> NormalizeAxes(const std::vector<int64_t>& axes, int rank,
                                         const std::string& attribute, bool empty_means_all);

// Fails unless every extent of the shape attribute `attribute` is >= 1.
Status CheckPositiveDims(const std::vector<int64_t>& dims, const std::string& attribute);

// The inverse of a permutation.
std::vector<int64_t> InversePermutation(const std::vector<int64_t>& permutation);

// Float32 of `shape`.
TensorType Float32(Shape shape);

// Attribute maps for compiler-made ops.
AttributeMap Attributes(const std::string& name, AttributeValue value);
AttributeMap TransposeAttributes(bool transpose_a, bool transpose_b);

// Cost of an elementwise op: `flops_per_element` per output element, bytes of all inputs and
// outputs.
OpCost ElementwiseCost(const OpSignature& signature, double flops_per_element);
// Bytes of all inputs and outputs.
double TouchedBytes(const OpSignature& signature);

// OpDefinition::localize for ops whose `shape` attribute spells their output's shape (reshape,
// fill, sum_to_shape, broadcast_axes): a physical instance writes its local output shape, with
// any -1 resolved.
void LocalizeOutputShape(PhysicalContext& context);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_OPS_SHAPE_HELPERS_H_
