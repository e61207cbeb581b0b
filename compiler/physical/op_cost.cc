#include "compiler/physical/op_cost.h"

#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {

double OpSeconds(const OpDefinition& definition, const std::vector<TensorType>& inputs,
                 const std::vector<TensorType>& outputs, const AttributeMap& attributes,
                 const placement::CostModel& cost, int device) {
  OpSignature signature{inputs, outputs, attributes};
  OpCost work = definition.cost ? definition.cost(signature) : ElementwiseCost(signature, 1);
  // A product's two operands (a conv2d's bias, a third input, stays float32).
  const bool bf16_operands = inputs.size() >= 2 && inputs[0].dtype == DType::kBFloat16 &&
                             inputs[1].dtype == DType::kBFloat16;
  return cost.ComputeSeconds(device, work.flops, work.bytes, work.product && bf16_operands);
}

int64_t TaskStateBytes(const OpDefinition& definition, const std::vector<TensorType>& inputs,
                       const std::vector<TensorType>& outputs, const AttributeMap& attributes) {
  if (!definition.state_bytes) return 0;
  return definition.state_bytes(OpSignature{inputs, outputs, attributes});
}

TensorType LocalType(const TensorType& type, const placement::NdSbp& sbp,
                     const placement::MeshShape& shape) {
  return TensorType{type.dtype, Shape(placement::LocalDims(type.shape.dims(), sbp, shape)),
                    type.layout};
}

}  // namespace compiler
}  // namespace softwire
