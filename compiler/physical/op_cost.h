// The cost model applied to one op instance: seconds per firing of an op of `definition` with
// these (logical or local) types on `device`.
#ifndef SOFTWIRE_COMPILER_PHYSICAL_OP_COST_H_
#define SOFTWIRE_COMPILER_PHYSICAL_OP_COST_H_

#include <vector>

#include "compiler/ir/attribute_map.h"
#include "compiler/ir/tensor_type.h"
#include "compiler/ops/op_definition.h"
#include "placement/cost_model.h"

namespace softwire {
namespace compiler {

// The definition's cost (or one flop per output element and the bytes touched, when it has
// none) as seconds on `device`.
double OpSeconds(const OpDefinition& definition, const std::vector<TensorType>& inputs,
                 const std::vector<TensorType>& outputs, const AttributeMap& attributes,
                 const placement::CostModel& cost, int device);

// Persistent bytes task `task` keeps (optimizer moments), from its definition and the types
// of its registers.
int64_t TaskStateBytes(const OpDefinition& definition, const std::vector<TensorType>& inputs,
                       const std::vector<TensorType>& outputs, const AttributeMap& attributes);

// `type` as each coordinate of a mesh of `shape` holds it under `sbp` (splits must be even).
TensorType LocalType(const TensorType& type, const placement::NdSbp& sbp,
                     const placement::MeshShape& shape);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_PHYSICAL_OP_COST_H_
