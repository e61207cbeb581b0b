#include "runtime/kernels/cpu/index_check.h"

#include <string>

namespace softwire {
namespace runtime {

Status IndexOutOfRangeError(const char* op_type, const char* tensor, const int32_t* indices,
                            int64_t count, int64_t bound) {
  return IndexOutOfRangeError(op_type, tensor, indices, count, 0, bound);
}

Status IndexOutOfRangeError(const char* op_type, const char* tensor, const int32_t* indices,
                            int64_t count, int64_t begin, int64_t end) {
  for (int64_t i = 0; i < count; ++i) {
    if (indices[i] < begin || indices[i] >= end) {
      return InvalidArgumentError(std::string(op_type) + ": " + tensor + "[" + std::to_string(i) +
                                  "] = " + std::to_string(indices[i]) + " is outside [" +
                                  std::to_string(begin) + ", " + std::to_string(end) + ")");
    }
  }
  return InternalError(std::string(op_type) + ": " + tensor +
                       " was reported out of range but every value is in range");
}

}  // namespace runtime
}  // namespace softwire
