#include "reference/kernels/testing/reference_kernel_runner.h"

#include "proto/tensor_desc.h"

namespace softwire {
namespace reference {

ReferenceTensor FloatTensor(const Shape& shape, std::vector<double> values) {
  CHECK_EQ(static_cast<int64_t>(values.size()), shape.NumElements()) << shape.ToString();
  ReferenceTensor tensor;
  tensor.dtype = DType::kFloat32;
  tensor.shape = shape;
  tensor.values = std::move(values);
  return tensor;
}

ReferenceTensor IntTensor(const Shape& shape, std::vector<double> values) {
  ReferenceTensor tensor = FloatTensor(shape, std::move(values));
  tensor.dtype = DType::kInt32;
  return tensor;
}

StatusOr<std::vector<ReferenceTensor>> RunReferenceKernel(
    const ReferenceKernelTable& table, const std::string& op_type,
    const std::vector<proto::Attribute>& attributes, const std::vector<ReferenceTensor>& inputs,
    const std::vector<Shape>& output_shapes, std::vector<double>* state, int64_t step,
    const std::vector<ReferenceTensor>& initial_outputs) {
  proto::KernelDef def;
  def.set_op_type(op_type);
  for (const proto::Attribute& attribute : attributes) *def.add_attr() = attribute;
  for (const ReferenceTensor& input : inputs)
    *def.add_input() = TensorDescOf(input.dtype, input.shape);
  std::vector<ReferenceTensor> outputs;
  if (!initial_outputs.empty()) {
    outputs = initial_outputs;
  } else {
    for (const Shape& shape : output_shapes) {
      outputs.push_back(FloatTensor(shape, std::vector<double>(shape.NumElements(), 0.0)));
    }
  }
  // Update kernels write the weight in place: their plan KernelDef has no outputs.
  if (state == nullptr) {
    for (const ReferenceTensor& output : outputs)
      *def.add_output() = TensorDescOf(output.dtype, output.shape);
  }
  ReferenceKernelCall call;
  call.def = &def;
  for (const ReferenceTensor& input : inputs) call.inputs.push_back(&input);
  call.outputs = &outputs;
  call.state = state;
  call.step = step;
  SOFTWIRE_RETURN_IF_ERROR(table.Run(call));
  return outputs;
}

}  // namespace reference
}  // namespace softwire
