// Reading and writing NumPy `.npy` files (format versions 1.0 to 3.0, C order).
#ifndef SOFTWIRE_BASE_NPY_H_
#define SOFTWIRE_BASE_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "base/status.h"

namespace softwire {

// A loaded array. `data` holds NumElements() elements of `dtype`, row-major.
struct NpyArray {
  DType dtype = DType::kInvalid;
  Shape shape;
  std::vector<char> data;

  template <typename T>
  const T* As() const {
    return reinterpret_cast<const T*>(data.data());
  }
};

// Reads `path`. float32 and int32 load as they are; float64 converts to float32, and int64 to
// int32 when every value fits. Errors name the path and what is wrong with the header.
StatusOr<NpyArray> ReadNpy(const std::string& path);

// Parses the bytes of a `.npy` file, as ReadNpy does once it has read them (errors without the
// path). Any bytes are safe: a bad header, a shape whose size overflows or data shorter than the
// shape are DataLoss, an unsupported dtype or layout InvalidArgument.
StatusOr<NpyArray> ParseNpy(const std::string& contents);

// Writes `data` (NumElements of `dtype`) to `path` atomically (see WriteFileAtomically).
Status WriteNpy(const std::string& path, DType dtype, const Shape& shape, const void* data);

}  // namespace softwire

#endif  // SOFTWIRE_BASE_NPY_H_
