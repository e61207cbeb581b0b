// fused (docs/OPS.md) in double: each statement of the program (proto/fused_program.h) runs
// through the reference kernel of its own op, on tensors of the shapes InferFusedLayout gives,
// so a fused plan's reference computes exactly what the unfused plan's reference computes (a
// product epilogue's matmul through the reference matmul, whole, then the statements after it).
#include <memory>
#include <utility>

#include "proto/fused_program.h"
#include "proto/tensor_desc.h"
#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

// The KernelDef of one statement as a kernel of its own op.
proto::KernelDef StepDef(const FusedStep& step, const std::vector<const ReferenceTensor*>& operands,
                         const Shape& shape, DType dtype) {
  proto::KernelDef def;
  def.set_op_type(FusedOpName(step.op));
  if (step.op == FusedOp::kScale) *def.add_attr() = FloatAttribute("factor", step.factor);
  if (step.op == FusedOp::kCast) *def.add_attr() = StringAttribute("dtype", DTypeName(step.dtype));
  if (step.op == FusedOp::kMatmul) {
    *def.add_attr() = BoolAttribute("transpose_a", step.transpose_a);
    *def.add_attr() = BoolAttribute("transpose_b", step.transpose_b);
  }
  for (const ReferenceTensor* operand : operands) {
    *def.add_input() = TensorDescOf(operand->dtype, operand->shape);
  }
  *def.add_output() = TensorDescOf(dtype, shape);
  return def;
}

Status Fused(const ReferenceKernelTable& table, const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const std::string text = attributes.RequiredString("program");
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  StatusOr<FusedProgram> program = ParseFusedProgram(text);
  if (!program.ok()) return OpError(call, program.status().message());
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const ReferenceTensor* input : call.inputs) {
    shapes.push_back(input->shape);
    dtypes.push_back(input->dtype);
  }
  StatusOr<FusedLayout> layout = InferFusedLayout(*program, shapes, dtypes);
  if (!layout.ok()) return OpError(call, layout.status().message());
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, call.inputs.size(), program->outputs.size()));
  std::vector<ReferenceTensor> values(program->steps.size());
  for (size_t index = 0; index < program->steps.size(); ++index) {
    const FusedStep& step = program->steps[index];
    std::vector<const ReferenceTensor*> operands;
    for (const FusedOperand& operand : step.operands) {
      operands.push_back(operand.is_input ? call.inputs[static_cast<size_t>(operand.index)]
                                          : &values[static_cast<size_t>(operand.index)]);
    }
    const proto::KernelDef def =
        StepDef(step, operands, layout->step_shapes[index], layout->step_dtypes[index]);
    std::vector<ReferenceTensor> result(1);
    result[0].dtype = layout->step_dtypes[index];
    result[0].shape = layout->step_shapes[index];
    result[0].values.assign(static_cast<size_t>(result[0].shape.NumElements()), 0.0);
    ReferenceKernelCall step_call;
    step_call.def = &def;
    step_call.inputs = operands;
    step_call.outputs = &result;
    SOFTWIRE_RETURN_IF_ERROR(table.Run(step_call));
    values[index] = std::move(result[0]);
  }
  for (size_t output = 0; output < program->outputs.size(); ++output) {
    const ReferenceTensor& value = values[static_cast<size_t>(program->outputs[output])];
    ReferenceTensor& out = Output(call, output);
    if (out.dtype != value.dtype) {
      return OpError(call,
                     "output y" + std::to_string(output) + " must be " + DTypeName(value.dtype));
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, output, value.shape));
    out.values = value.values;
  }
  return Status::Ok();
}

}  // namespace

void RegisterReferenceFusedKernel(ReferenceKernelTable* table) {
  // The statements run through the kernels registered so far (every op but `fused` itself).
  auto ops = std::make_shared<const ReferenceKernelTable>(*table);
  table->Register("fused", [ops](const ReferenceKernelCall& call) { return Fused(*ops, call); });
}

}  // namespace reference
}  // namespace softwire
