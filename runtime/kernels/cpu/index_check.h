// Range checks of int32 labels and ids (docs/OPS.md: a kernel that finds bad data fails with a
// message naming the tensor, the flat index and the value, and never reads out of bounds).
// Kernels run the check before touching any output.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_INDEX_CHECK_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_INDEX_CHECK_H_

#include <cstdint>

#include "base/status.h"

namespace softwire {
namespace runtime {

// The InvalidArgument for the first value of indices[0..count) outside [0, bound), e.g.
// "softmax_cross_entropy: labels[7] = 12 is outside [0, 10)". Called only on failure.
Status IndexOutOfRangeError(const char* op_type, const char* tensor, const int32_t* indices,
                            int64_t count, int64_t bound);

// OK when every value of indices[0..count) is in [0, bound). The scan is branch-free (one
// unsigned compare per value) so it vectorises; the message is built only on failure.
inline Status CheckIndices(const char* op_type, const char* tensor, const int32_t* indices,
                           int64_t count, int64_t bound) {
  const uint64_t limit = static_cast<uint64_t>(bound);
  int out_of_range = 0;
  for (int64_t i = 0; i < count; ++i) {
    // A negative value becomes a huge unsigned one.
    out_of_range |= static_cast<uint64_t>(static_cast<int64_t>(indices[i])) >= limit;
  }
  if (out_of_range == 0) return Status::Ok();
  return IndexOutOfRangeError(op_type, tensor, indices, count, bound);
}

// The same for the range [begin, end), e.g. the rows [index_begin, index_begin + V_local) a
// part of a split embedding table holds: "embedding: ids[3] = 70 is outside [32, 64)".
Status IndexOutOfRangeError(const char* op_type, const char* tensor, const int32_t* indices,
                            int64_t count, int64_t begin, int64_t end);

inline Status CheckIndicesIn(const char* op_type, const char* tensor, const int32_t* indices,
                             int64_t count, int64_t begin, int64_t end) {
  const uint64_t limit = static_cast<uint64_t>(end - begin);
  int out_of_range = 0;
  for (int64_t i = 0; i < count; ++i) {
    out_of_range |= static_cast<uint64_t>(static_cast<int64_t>(indices[i]) - begin) >= limit;
  }
  if (out_of_range == 0) return Status::Ok();
  return IndexOutOfRangeError(op_type, tensor, indices, count, begin, end);
}

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_INDEX_CHECK_H_
