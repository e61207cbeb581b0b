#include "base/npy.h"

#include <cstring>
#include <limits>

#include "base/file.h"

namespace softwire {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// Finds the value text of `key` in a header dict like "{'descr': '<f4', 'shape': (2, 3), }".
StatusOr<std::string> HeaderValue(const std::string& header, const std::string& key) {
  size_t key_position = header.find("'" + key + "'");
  if (key_position == std::string::npos) {
    return DataLossError("header has no '" + key + "' entry");
  }
  size_t colon = header.find(':', key_position);
  if (colon == std::string::npos) return DataLossError("malformed '" + key + "' entry");
  size_t begin = header.find_first_not_of(' ', colon + 1);
  if (begin == std::string::npos) return DataLossError("malformed '" + key + "' entry");
  size_t end;
  if (header[begin] == '(') {
    end = header.find(')', begin);
    if (end == std::string::npos) return DataLossError("unterminated shape");
    return header.substr(begin + 1, end - begin - 1);
  }
  if (header[begin] == '\'') {
    end = header.find('\'', begin + 1);
    if (end == std::string::npos) return DataLossError("unterminated string");
    return header.substr(begin + 1, end - begin - 1);
  }
  end = header.find_first_of(",}", begin);
  return header.substr(begin, end - begin);
}

StatusOr<Shape> ParseShapeTuple(const std::string& text) {
  std::vector<int64_t> dims;
  size_t position = 0;
  while (position < text.size()) {
    size_t next = text.find(',', position);
    std::string item =
        text.substr(position, next == std::string::npos ? std::string::npos : next - position);
    size_t first = item.find_first_not_of(' ');
    if (first != std::string::npos) {
      char* end = nullptr;
      long long value = std::strtoll(item.c_str() + first, &end, 10);
      if (end == item.c_str() + first || value < 0) {
        return DataLossError("bad shape entry '" + item + "'");
      }
      dims.push_back(value);
    }
    if (next == std::string::npos) break;
    position = next + 1;
  }
  return Shape(std::move(dims));
}

Status ConvertInto(const std::string& descr, const char* raw, int64_t count, NpyArray* array) {
  if (descr == "<f4" || descr == "|f4") {
    array->dtype = DType::kFloat32;
    array->data.assign(raw, raw + count * 4);
  } else if (descr == "<i4" || descr == "|i4") {
    array->dtype = DType::kInt32;
    array->data.assign(raw, raw + count * 4);
  } else if (descr == "<f8") {
    array->dtype = DType::kFloat32;
    array->data.resize(count * 4);
    float* out = reinterpret_cast<float*>(array->data.data());
    for (int64_t i = 0; i < count; ++i) {
      double value;
      std::memcpy(&value, raw + i * 8, 8);
      out[i] = static_cast<float>(value);
    }
  } else if (descr == "<i8") {
    array->dtype = DType::kInt32;
    array->data.resize(count * 4);
    int32_t* out = reinterpret_cast<int32_t*>(array->data.data());
    for (int64_t i = 0; i < count; ++i) {
      int64_t value;
      std::memcpy(&value, raw + i * 8, 8);
      if (value < std::numeric_limits<int32_t>::min() ||
          value > std::numeric_limits<int32_t>::max()) {
        return InvalidArgumentError("int64 element " + std::to_string(i) + " (" +
                                    std::to_string(value) + ") does not fit in int32");
      }
      out[i] = static_cast<int32_t>(value);
    }
  } else {
    return InvalidArgumentError("unsupported dtype '" + descr +
                                "' (expected <f4, <i4, <f8 or <i8)");
  }
  return Status::Ok();
}

int64_t ElementSize(const std::string& descr) {
  return (descr == "<f8" || descr == "<i8") ? 8 : 4;
}

// The bytes of a `shape` array of `element_size`-byte elements; DataLoss when the count does
// not fit in int64 (a header can claim any extents; the data must then be there).
StatusOr<int64_t> DataBytes(const Shape& shape, int64_t element_size) {
  int64_t bytes = element_size;
  for (int64_t dim : shape.dims()) {
    if (__builtin_mul_overflow(bytes, dim, &bytes)) {
      return DataLossError("shape " + shape.ToString() + " holds more bytes than an int64 counts");
    }
  }
  return bytes;
}

}  // namespace

StatusOr<NpyArray> ParseNpy(const std::string& contents) {
  if (contents.size() < kMagicSize + 4 || contents.compare(0, kMagicSize, kMagic) != 0) {
    return DataLossError("not a .npy file (bad magic)");
  }
  uint8_t major = static_cast<uint8_t>(contents[6]);
  size_t header_length;
  size_t header_start;
  if (major == 1) {
    header_length = static_cast<uint8_t>(contents[8]) |
                    (static_cast<size_t>(static_cast<uint8_t>(contents[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (contents.size() < 12) return DataLossError("truncated header");
    header_length = 0;
    for (int i = 0; i < 4; ++i) {
      header_length |= static_cast<size_t>(static_cast<uint8_t>(contents[8 + i])) << (8 * i);
    }
    header_start = 12;
  } else {
    return DataLossError("unsupported format version " + std::to_string(major));
  }
  if (contents.size() < header_start + header_length) return DataLossError("truncated header");
  std::string header = contents.substr(header_start, header_length);
  SOFTWIRE_ASSIGN_OR_RETURN(std::string descr, HeaderValue(header, "descr"));
  SOFTWIRE_ASSIGN_OR_RETURN(std::string fortran, HeaderValue(header, "fortran_order"));
  SOFTWIRE_ASSIGN_OR_RETURN(std::string shape_text, HeaderValue(header, "shape"));
  if (fortran.find("True") != std::string::npos) {
    return InvalidArgumentError("Fortran-order arrays are not supported; save with C order");
  }
  NpyArray array;
  SOFTWIRE_ASSIGN_OR_RETURN(array.shape, ParseShapeTuple(shape_text));
  SOFTWIRE_ASSIGN_OR_RETURN(int64_t needed_bytes, DataBytes(array.shape, ElementSize(descr)));
  int64_t count = array.shape.NumElements();
  size_t data_start = header_start + header_length;
  size_t needed = static_cast<size_t>(needed_bytes);
  if (contents.size() - data_start < needed) {
    return DataLossError("data truncated: expected " + std::to_string(needed) + " bytes, found " +
                         std::to_string(contents.size() - data_start));
  }
  SOFTWIRE_RETURN_IF_ERROR(ConvertInto(descr, contents.data() + data_start, count, &array));
  return array;
}

StatusOr<NpyArray> ReadNpy(const std::string& path) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::string contents, ReadFile(path));
  StatusOr<NpyArray> array = ParseNpy(contents);
  if (!array.ok()) return array.status().WithContext(path);
  return array;
}

Status WriteNpy(const std::string& path, DType dtype, const Shape& shape, const void* data) {
  const char* descr = nullptr;
  switch (dtype) {
    case DType::kFloat32:
      descr = "<f4";
      break;
    case DType::kInt32:
      descr = "<i4";
      break;
    case DType::kBFloat16:  // NumPy has no bfloat16; variables are float32 master copies.
      return InvalidArgumentError("cannot write bfloat16 to .npy (NumPy has no such dtype)");
    case DType::kInvalid:
      return InvalidArgumentError("cannot write an invalid dtype");
  }
  std::string shape_text = "(";
  for (int axis = 0; axis < shape.rank(); ++axis) {
    shape_text += std::to_string(shape.dim(axis)) + ",";
    if (axis + 1 < shape.rank()) shape_text += " ";
  }
  shape_text += ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape_text + ", }";
  // Pad so the data starts at a multiple of 64 bytes; the header ends with '\n'.
  size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string contents(kMagic, kMagicSize);
  contents += '\x01';
  contents += '\x00';
  contents += static_cast<char>(header.size() & 0xff);
  contents += static_cast<char>((header.size() >> 8) & 0xff);
  contents += header;
  contents.append(static_cast<const char*>(data),
                  static_cast<size_t>(shape.NumElements() * SizeOf(dtype)));
  return WriteFileAtomically(path, contents);
}

}  // namespace softwire
