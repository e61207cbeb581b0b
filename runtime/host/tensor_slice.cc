#include "runtime/host/tensor_slice.h"

#include <cstring>

namespace softwire {
namespace runtime {
namespace {

// Copies between the packed part and the logical tensor, in the direction `to_logical` says.
Status CopySlice(const TensorSlice& slice, const Shape& logical, int64_t element_bytes, char* part,
                 int64_t part_bytes, char* whole, bool to_logical, const std::string& what) {
  SOFTWIRE_ASSIGN_OR_RETURN(int64_t bytes,
                            SlicePartBytes(slice, logical, element_bytes, part_bytes, what));
  // An empty tensor (a dimension of 0) may have no memory at all: nothing to copy, and memcpy
  // must not be handed its null pointer.
  if (bytes == 0) return Status::Ok();
  if (slice.axis < 0) {
    if (to_logical) {
      std::memcpy(whole, part, static_cast<size_t>(bytes));
    } else {
      std::memcpy(part, whole, static_cast<size_t>(bytes));
    }
    return Status::Ok();
  }
  const int64_t outer = logical.NumElements(0, slice.axis);
  const int64_t inner = logical.NumElements(slice.axis + 1, logical.rank()) * element_bytes;
  const int64_t extent = slice.end - slice.begin;
  for (int64_t o = 0; o < outer; ++o) {
    char* in_whole = whole + (o * logical.dim(slice.axis) + slice.begin) * inner;
    char* in_part = part + o * extent * inner;
    if (to_logical) {
      std::memcpy(in_whole, in_part, static_cast<size_t>(extent * inner));
    } else {
      std::memcpy(in_part, in_whole, static_cast<size_t>(extent * inner));
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<int64_t> SlicePartBytes(const TensorSlice& slice, const Shape& logical,
                                 int64_t element_bytes, int64_t part_bytes,
                                 const std::string& what) {
  int64_t bytes = logical.NumElements() * element_bytes;
  if (slice.axis >= 0) {
    if (slice.axis >= logical.rank() || slice.begin < 0 || slice.end > logical.dim(slice.axis) ||
        slice.begin >= slice.end) {
      return InvalidArgumentError(
          what + ": slice [" + std::to_string(slice.begin) + ", " + std::to_string(slice.end) +
          ") on axis " + std::to_string(slice.axis) + " does not fit shape " + logical.ToString());
    }
    bytes = bytes / logical.dim(slice.axis) * (slice.end - slice.begin);
  }
  if (part_bytes < bytes) {
    return InvalidArgumentError(what + ": its memory (" + std::to_string(part_bytes) +
                                " bytes) is smaller than its part (" + std::to_string(bytes) +
                                " bytes)");
  }
  return bytes;
}

Status CopyPartToLogical(const TensorSlice& slice, const Shape& logical, int64_t element_bytes,
                         const char* part, int64_t part_bytes, char* target,
                         const std::string& what) {
  return CopySlice(slice, logical, element_bytes, const_cast<char*>(part), part_bytes, target,
                   /*to_logical=*/true, what);
}

Status CopyLogicalToPart(const TensorSlice& slice, const Shape& logical, int64_t element_bytes,
                         const char* source, char* part, int64_t part_bytes,
                         const std::string& what) {
  return CopySlice(slice, logical, element_bytes, part, part_bytes, const_cast<char*>(source),
                   /*to_logical=*/false, what);
}

}  // namespace runtime
}  // namespace softwire
