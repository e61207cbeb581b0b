#include "base/dtype.h"

namespace softwire {

int64_t SizeOf(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kInt32:
      return 4;
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
    case DType::kInvalid:
      return "invalid";
  }
  return "invalid";
}

StatusOr<DType> ParseDType(const std::string& name) {
  if (name == "float32") return DType::kFloat32;
  if (name == "int32") return DType::kInt32;
  return InvalidArgumentError("unknown dtype '" + name + "' (expected float32 or int32)");
}

}  // namespace softwire
