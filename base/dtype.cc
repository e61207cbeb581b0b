#include "base/dtype.h"

namespace softwire {

int64_t SizeOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kInt32:
      return 4;
    case DType::kBFloat16:
      return 2;
    case DType::kInvalid:
      return 0;
  }
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kInt32:
      return "int32";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kInvalid:
      return "invalid";
  }
  return "invalid";
}

StatusOr<DType> ParseDType(const std::string& name) {
  if (name == "float32") return DType::kFloat32;
  if (name == "int32") return DType::kInt32;
  if (name == "bfloat16" || name == "bf16") return DType::kBFloat16;
  return InvalidArgumentError("unknown dtype '" + name + "' (expected float32, int32 or bfloat16)");
}

}  // namespace softwire
