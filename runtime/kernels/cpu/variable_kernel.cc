// variable: on its first firing writes the initial value of the part of a variable its actor
// holds (data/initializer.h); later firings write nothing, because the update actor changed the
// value in place.
#include <memory>

#include "data/initializer.h"
#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/kernel_families.h"
#include "runtime/kernels/cpu/kernel_signature.h"

namespace softwire {
namespace runtime {
namespace {

class VariableKernel final : public Kernel {
 public:
  static StatusOr<std::unique_ptr<Kernel>> Create(const KernelSetup& setup) {
    const proto::KernelDef& def = setup.actor->kernel();
    SOFTWIRE_RETURN_IF_ERROR(KernelAttributes(def).Finish());
    // Trainable variables are float32; a frozen one (an int32 table) may be int32.
    if (def.output_size() != 1) return KernelDefError(def, "expects exactly one output");
    const DType dtype = DTypeOf(def.output(0));
    if (dtype != DType::kFloat32 && dtype != DType::kInt32) {
      return KernelDefError(def, "output value must be float32 or int32");
    }
    SOFTWIRE_RETURN_IF_ERROR(CheckSignature(def, {}, {}, {"value"}, {dtype}));
    if (setup.plan == nullptr) return KernelDefError(def, "needs the plan (job directory)");
    const proto::VariableActorDef& variable = setup.actor->variable();
    Shape logical = ShapeOf(variable.logical_tensor());
    data::VariablePart part;
    part.split_axis = variable.split_axis();
    part.begin = variable.split_begin();
    part.end = variable.split_end();
    std::vector<int64_t> part_dims = logical.dims();
    if (part.split_axis >= 0) {
      if (part.split_axis >= logical.rank() || part.begin < 0 || part.end < part.begin ||
          part.end > logical.dim(part.split_axis)) {
        return KernelDefError(def, "part [" + std::to_string(part.begin) + ", " +
                                       std::to_string(part.end) + ") on axis " +
                                       std::to_string(part.split_axis) + " is not within " +
                                       logical.ToString());
      }
      part_dims[part.split_axis] = part.end - part.begin;
    } else if (part.split_axis != -1) {
      return KernelDefError(
          def, "split_axis must be -1 or an axis, not " + std::to_string(part.split_axis));
    }
    SOFTWIRE_RETURN_IF_ERROR(
        CheckShape(def, "output value", ShapeOf(def.output(0)), Shape(part_dims)));
    return std::unique_ptr<Kernel>(new VariableKernel(variable, logical, part, setup.data_root));
  }

  Status Run(const KernelContext& context) override {
    if (context.firing != 0) return Status::Ok();
    Status status = data::InitializeVariable(initializer_, logical_shape_, part_, data_root_,
                                             context.outputs[0]);
    if (!status.ok()) return status.WithContext("variable '" + variable_name_ + "'");
    return Status::Ok();
  }

 private:
  VariableKernel(const proto::VariableActorDef& variable, Shape logical_shape,
                 data::VariablePart part, data::DataRoot data_root)
      : variable_name_(variable.variable()),
        initializer_(variable.initializer()),
        logical_shape_(std::move(logical_shape)),
        part_(part),
        data_root_(std::move(data_root)) {}

  const std::string variable_name_;
  const proto::Initializer initializer_;
  const Shape logical_shape_;
  const data::VariablePart part_;
  const data::DataRoot data_root_;
};

}  // namespace

void RegisterVariableKernel(KernelRegistry* registry) {
  registry->Register("variable", VariableKernel::Create);
}

}  // namespace runtime
}  // namespace softwire
