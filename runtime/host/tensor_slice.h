// TensorSlice: a part of a logical tensor that one device holds, packed: the range [begin, end)
// on one axis, or the whole tensor (axis -1). Variables and their optimizer state are stored in
// parts (a tensor-parallel split) and saved whole (logical), so reading them out and writing
// them back both copy between a packed part and its place in the logical tensor.
//
//   TensorSlice slice{/*axis=*/1, /*begin=*/64, /*end=*/128};
//   Status read = CopyPartToLogical(slice, logical_shape, 4, part, part_bytes, logical, "w1");
//
// Pure functions; thread-safe for disjoint targets.
#ifndef SOFTWIRE_RUNTIME_HOST_TENSOR_SLICE_H_
#define SOFTWIRE_RUNTIME_HOST_TENSOR_SLICE_H_

#include <cstdint>
#include <string>

#include "base/shape.h"
#include "base/status.h"

namespace softwire {
namespace runtime {

struct TensorSlice {
  int axis = -1;  // -1: the whole tensor.
  int64_t begin = 0;
  int64_t end = 0;
};

// Checks that `slice` lies inside `logical` and that a part of it fits `part_bytes`; returns the
// part's size in bytes. Errors name `what`.
StatusOr<int64_t> SlicePartBytes(const TensorSlice& slice, const Shape& logical,
                                 int64_t element_bytes, int64_t part_bytes,
                                 const std::string& what);

// Copies the packed `part` (`part_bytes` available) into its place in `logical`.
Status CopyPartToLogical(const TensorSlice& slice, const Shape& logical, int64_t element_bytes,
                         const char* part, int64_t part_bytes, char* target,
                         const std::string& what);

// Copies the slice's place in `logical` into the packed `part` (`part_bytes` available).
Status CopyLogicalToPart(const TensorSlice& slice, const Shape& logical, int64_t element_bytes,
                         const char* source, char* part, int64_t part_bytes,
                         const std::string& what);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_TENSOR_SLICE_H_
