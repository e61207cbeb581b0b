// Fuzz target: the .npy reader (base/npy.h's ParseNpy, what ReadNpy runs on a file's bytes).
// Input: the bytes of a file. Any header, shape or data length must give a Status, never a
// crash or an allocation the bytes do not back; an array that loads holds exactly its shape's
// elements.
#include <cstdlib>
#include <string>

#include "base/npy.h"
#include "fuzz/fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string contents(reinterpret_cast<const char*>(data), size);
  softwire::StatusOr<softwire::NpyArray> array = softwire::ParseNpy(contents);
  if (!array.ok()) return 0;
  // Loaded arrays are float32 or int32, NumElements() of them.
  const size_t expected = static_cast<size_t>(array->shape.NumElements()) * 4;
  if (array->data.size() != expected) std::abort();
  return 0;
}
