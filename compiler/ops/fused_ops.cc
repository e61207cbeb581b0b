// fused (docs/OPS.md): a chain of element-wise ops run as one kernel, one pass over memory. The
// fuse_elementwise pass makes these from the task graph; a job may write one too. Its program
// is proto/fused_program.h's text; inference types every statement by the rules of its op (a
// product epilogue's matmul by matmul's).
#include "compiler/ops/op_registry.h"
#include "compiler/ops/shape_helpers.h"
#include "proto/fused_program.h"

namespace softwire {
namespace compiler {
namespace {

Status InferFused(InferenceContext& context) {
  SOFTWIRE_ASSIGN_OR_RETURN(FusedProgram program,
                            ParseFusedProgram(context.attributes().GetString("program")));
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (int input = 0; input < context.input_count(); ++input) {
    shapes.push_back(context.input_shape(input));
    dtypes.push_back(context.input(input).dtype);
  }
  SOFTWIRE_ASSIGN_OR_RETURN(FusedLayout layout, InferFusedLayout(program, shapes, dtypes));
  if (static_cast<size_t>(context.output_count()) != program.outputs.size()) {
    return InvalidArgumentError("the program writes " + std::to_string(program.outputs.size()) +
                                " outputs, not " + std::to_string(context.output_count()));
  }
  for (size_t output = 0; output < program.outputs.size(); ++output) {
    const size_t step = static_cast<size_t>(program.outputs[output]);
    context.SetOutput(static_cast<int>(output),
                      TensorType{layout.step_dtypes[step], layout.step_shapes[step]});
  }
  return Status::Ok();
}

// One pass: the statements' work per element, and every input and output touched once
// (docs/OPS.md), which is what fusion saves over the unfused chain. A product epilogue adds the
// product's 2 M N K and counts as a product (its flops run at the bf16 product rate when its
// operands, inputs 0 and 1, are bf16; the few element-wise flops after it are counted alike).
OpCost FusedCost(const OpSignature& signature) {
  StatusOr<FusedProgram> program = ParseFusedProgram(signature.attributes.GetString("program"));
  double flops = 0;
  bool product = false;
  if (program.ok() && !signature.outputs.empty()) {
    const double elements = static_cast<double>(signature.outputs[0].NumElements());
    for (const FusedStep& step : program->steps) {
      flops += elements * static_cast<double>(FusedStepWork(step));
    }
    if (program->HasProduct() && signature.inputs.size() >= 2) {
      const Shape& b = signature.inputs[1].shape;
      const bool transpose_b = program->steps[0].transpose_b;
      flops += 2.0 * elements * static_cast<double>(transpose_b ? b.dim(-1) : b.dim(-2));
      product = true;
    }
  }
  return OpCost{flops, TouchedBytes(signature), product};
}

}  // namespace

void AddFusedOps(OpRegistry& registry) {
  OpDefinition fused;
  fused.type = "fused";
  fused.usage = OpUsage::kInternal;
  fused.input_names = {"x"};
  fused.variadic_inputs = true;
  fused.min_inputs = 1;
  fused.output_names = {"y"};
  fused.variadic_outputs = true;
  fused.attributes = {RequiredAttribute("program", AttributeKind::kString)};
  fused.infer = InferFused;
  // No gradient: fuse_elementwise runs on the task graph, after autodiff. No sbp signatures
  // but all-broadcast: a fused op written in a job runs whole on each device of its mesh.
  fused.cost = FusedCost;
  registry.Add(fused);
}

}  // namespace compiler
}  // namespace softwire
