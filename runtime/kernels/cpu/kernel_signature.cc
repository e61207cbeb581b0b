#include "runtime/kernels/cpu/kernel_signature.h"

namespace softwire {
namespace runtime {
namespace {

Status CheckTensors(const proto::KernelDef& def, const char* role,
                    const google::protobuf::RepeatedPtrField<proto::TensorDesc>& descs,
                    const std::vector<std::string>& names, const std::vector<DType>& dtypes) {
  CHECK_EQ(names.size(), dtypes.size());
  if (descs.size() != static_cast<int>(names.size())) {
    return KernelDefError(def, "expects " + std::to_string(names.size()) + " " + role +
                                   "s but the kernel has " + std::to_string(descs.size()));
  }
  for (int index = 0; index < descs.size(); ++index) {
    DType dtype = DTypeOf(descs[index]);
    if (dtype != dtypes[index]) {
      return KernelDefError(def, std::string(role) + " " + std::to_string(index) + " (" +
                                     names[index] + ") must be " + DTypeName(dtypes[index]) +
                                     ", not " + DTypeName(dtype));
    }
    for (int64_t extent : descs[index].dims()) {
      if (extent < 0) {
        return KernelDefError(def, std::string(role) + " " + std::to_string(index) + " (" +
                                       names[index] + ") has a negative extent in " +
                                       ShapeOf(descs[index]).ToString());
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckSignature(const proto::KernelDef& def, const std::vector<std::string>& input_names,
                      const std::vector<DType>& input_dtypes,
                      const std::vector<std::string>& output_names,
                      const std::vector<DType>& output_dtypes) {
  SOFTWIRE_RETURN_IF_ERROR(CheckTensors(def, "input", def.input(), input_names, input_dtypes));
  return CheckTensors(def, "output", def.output(), output_names, output_dtypes);
}

Status KernelDefError(const proto::KernelDef& def, const std::string& problem) {
  return InvalidArgumentError(def.op_type() + ": " + problem);
}

Status CheckShape(const proto::KernelDef& def, const std::string& tensor, const Shape& actual,
                  const Shape& expected) {
  if (actual == expected) return Status::Ok();
  return KernelDefError(
      def, tensor + " has shape " + actual.ToString() + " but must be " + expected.ToString());
}

}  // namespace runtime
}  // namespace softwire
