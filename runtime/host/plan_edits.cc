#include "runtime/host/plan_edits.h"

#include "plan/fill_arithmetic.h"
#include "proto/tensor_desc.h"
#include "runtime/host/tensor_slice.h"

namespace softwire {
namespace runtime {
namespace {

StatusOr<DType> SupportedDType(const proto::TensorDesc& desc, const std::string& what) {
  const DType dtype = DTypeOf(desc);
  if (dtype == DType::kInvalid)
    return InvalidArgumentError(what + ": tensor has no supported dtype");
  return dtype;
}

}  // namespace

StatusOr<std::map<std::string, NpyArray>> ReadVariables(const proto::Plan& plan,
                                                        const RegisterSlots& slots) {
  std::map<std::string, NpyArray> variables;
  int64_t pieces =
      plan.schedule().steps() * std::max<int64_t>(1, plan.schedule().pieces_per_step());
  for (const proto::PlanVariable& variable : plan.variable()) {
    std::string what = "variable '" + variable.name() + "'";
    bool has_memory = true;
    for (const proto::VariablePart& part : variable.part()) {
      if (part.register_id() >= 0 && part.register_id() < plan.register_def_size() &&
          !slots[part.register_id()].empty() && slots[part.register_id()][0] == nullptr) {
        has_memory = false;  // A part on a sim device: no value to read.
      }
    }
    if (!has_memory) continue;
    NpyArray array;
    SOFTWIRE_ASSIGN_OR_RETURN(array.dtype, SupportedDType(variable.tensor(), what));
    array.shape = Shape(
        std::vector<int64_t>(variable.tensor().dims().begin(), variable.tensor().dims().end()));
    int64_t element_bytes = SizeOf(array.dtype);
    array.data.assign(static_cast<size_t>(array.shape.NumElements() * element_bytes), 0);
    for (const proto::VariablePart& part : variable.part()) {
      if (part.register_id() < 0 || part.register_id() >= plan.register_def_size()) {
        return InvalidArgumentError(what + ": part register " + std::to_string(part.register_id()) +
                                    " does not exist");
      }
      const proto::RegisterDef& def = plan.register_def(static_cast<int>(part.register_id()));
      // Fills go round robin over the slots; the last fill is the final value.
      int64_t fills = plan::FillCount(pieces, std::max<int64_t>(1, def.period()));
      int slot = fills > 0 ? static_cast<int>(plan::SlotOf(fills - 1, def.slots())) : 0;
      const TensorSlice slice{part.split_axis(), part.split_begin(), part.split_end()};
      SOFTWIRE_RETURN_IF_ERROR(CopyPartToLogical(
          slice, array.shape, element_bytes, slots[part.register_id()][slot], def.bytes_per_slot(),
          array.data.data(), what + " part in register '" + def.name() + "'"));
    }
    variables[variable.name()] = std::move(array);
  }
  return variables;
}

}  // namespace runtime
}  // namespace softwire
