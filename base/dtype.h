// Element types and their sizes.
#ifndef SOFTWIRE_BASE_DTYPE_H_
#define SOFTWIRE_BASE_DTYPE_H_

#include <cstdint>
#include <string>

#include "base/status.h"

namespace softwire {

// Mirrors proto DataType; kept separate so code below the protos needs no generated headers.
enum class DType : int {
  kInvalid = 0,
  kFloat32 = 1,
  kInt32 = 2,
  kBFloat16 = 3,  // base/bfloat16.h: product inputs under mixed precision.
};

// Bytes per element; 0 for kInvalid.
int64_t SizeOf(DType dtype);

// "float32", "int32", "bfloat16", "invalid".
const char* DTypeName(DType dtype);

// Inverse of DTypeName ("bf16" is accepted for bfloat16). InvalidArgument for unknown names.
StatusOr<DType> ParseDType(const std::string& name);

}  // namespace softwire

#endif  // SOFTWIRE_BASE_DTYPE_H_
