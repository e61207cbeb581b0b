#include "data/initializer.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/file.h"
#include "base/npy.h"
#include "base/random.h"

namespace softwire {
namespace data {
namespace {

// The part of a logical tensor as three nested ranges: `outer` blocks (the axes before the
// split axis), each holding the rows [begin, end) of `axis_extent` rows of `inner` elements.
// The whole tensor is outer = 1, axis_extent = rows = N, inner = 1.
struct PartGeometry {
  int64_t outer = 1;
  int64_t axis_extent = 1;
  int64_t begin = 0;
  int64_t end = 1;
  int64_t inner = 1;

  Shape part_shape;

  int64_t NumElements() const { return outer * (end - begin) * inner; }

  // Calls visit(part_index, logical_index) for every element of the part, in part order.
  template <typename Visit>
  void ForEach(Visit visit) const {
    int64_t part_index = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t row = begin; row < end; ++row) {
        int64_t logical = (o * axis_extent + row) * inner;
        for (int64_t i = 0; i < inner; ++i) visit(part_index++, logical + i);
      }
    }
  }
};

StatusOr<PartGeometry> GeometryOf(const Shape& logical_shape, const VariablePart& part) {
  PartGeometry geometry;
  for (int64_t extent : logical_shape.dims()) {
    if (extent < 0) {
      return InvalidArgumentError("variable shape " + logical_shape.ToString() +
                                  " has a negative extent");
    }
  }
  if (part.split_axis == -1) {
    geometry.axis_extent = logical_shape.NumElements();
    geometry.end = geometry.axis_extent;
    geometry.part_shape = logical_shape;
    return geometry;
  }
  if (part.split_axis < 0 || part.split_axis >= logical_shape.rank()) {
    return InvalidArgumentError("part split_axis " + std::to_string(part.split_axis) +
                                " is outside a variable of shape " + logical_shape.ToString());
  }
  int64_t extent = logical_shape.dim(part.split_axis);
  if (part.begin < 0 || part.begin > part.end || part.end > extent) {
    return InvalidArgumentError("part [" + std::to_string(part.begin) + ", " +
                                std::to_string(part.end) + ") of axis " +
                                std::to_string(part.split_axis) +
                                " is outside a variable of "
                                "shape " +
                                logical_shape.ToString());
  }
  geometry.outer = logical_shape.NumElements(0, part.split_axis);
  geometry.axis_extent = extent;
  geometry.begin = part.begin;
  geometry.end = part.end;
  geometry.inner = logical_shape.NumElements(part.split_axis + 1, logical_shape.rank());
  std::vector<int64_t> dims = logical_shape.dims();
  dims[part.split_axis] = part.end - part.begin;
  geometry.part_shape = Shape(std::move(dims));
  return geometry;
}

Status CheckFinite(double value, const std::string& field) {
  if (!std::isfinite(value)) {
    return InvalidArgumentError("initializer " + field + " must be finite, got " +
                                std::to_string(value));
  }
  return Status::Ok();
}

Status FillConstant(double value, const PartGeometry& geometry, const TensorView& output) {
  SOFTWIRE_RETURN_IF_ERROR(CheckFinite(value, "constant.value"));
  int64_t count = geometry.NumElements();
  if (output.dtype == DType::kFloat32) {
    float* values = static_cast<float*>(output.data);
    for (int64_t i = 0; i < count; ++i) values[i] = static_cast<float>(value);
    return Status::Ok();
  }
  if (value != std::floor(value) || value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max()) {
    return InvalidArgumentError("initializer constant.value " + std::to_string(value) +
                                " is not an int32 value, as the int32 variable needs");
  }
  int32_t* values = static_cast<int32_t*>(output.data);
  for (int64_t i = 0; i < count; ++i) values[i] = static_cast<int32_t>(value);
  return Status::Ok();
}

Status FillNormal(const proto::NormalInitializer& normal, const PartGeometry& geometry,
                  float* values) {
  SOFTWIRE_RETURN_IF_ERROR(CheckFinite(normal.mean(), "normal.mean"));
  SOFTWIRE_RETURN_IF_ERROR(CheckFinite(normal.stddev(), "normal.stddev"));
  if (normal.stddev() < 0) {
    return InvalidArgumentError("initializer normal.stddev must be >= 0, got " +
                                std::to_string(normal.stddev()));
  }
  geometry.ForEach([&](int64_t index, int64_t logical) {
    values[index] = static_cast<float>(
        normal.mean() + normal.stddev() * NormalAt(normal.seed(), static_cast<uint64_t>(logical)));
  });
  return Status::Ok();
}

Status FillUniform(const proto::UniformInitializer& uniform, const PartGeometry& geometry,
                   float* values) {
  SOFTWIRE_RETURN_IF_ERROR(CheckFinite(uniform.low(), "uniform.low"));
  SOFTWIRE_RETURN_IF_ERROR(CheckFinite(uniform.high(), "uniform.high"));
  if (uniform.high() < uniform.low()) {
    return InvalidArgumentError("initializer uniform.high (" + std::to_string(uniform.high()) +
                                ") is below uniform.low (" + std::to_string(uniform.low()) + ")");
  }
  double width = uniform.high() - uniform.low();
  // Rounding to float32 may land exactly on `high`; step back below it to keep [low, high).
  float high = static_cast<float>(uniform.high());
  float below_high = std::nextafter(high, -INFINITY);
  geometry.ForEach([&](int64_t index, int64_t logical) {
    float value = static_cast<float>(
        uniform.low() + width * UniformAt(uniform.seed(), static_cast<uint64_t>(logical)));
    values[index] = (value >= high && width > 0) ? below_high : value;
  });
  return Status::Ok();
}

Status FillFromNpy(const std::string& path, const Shape& logical_shape,
                   const PartGeometry& geometry, const TensorView& output) {
  StatusOr<NpyArray> loaded = ReadNpy(path);
  if (!loaded.ok()) return loaded.status().WithContext("initializer npy_path");
  const NpyArray& array = *loaded;
  if (array.dtype != output.dtype) {
    return InvalidArgumentError("initializer npy_path '" + path + "': holds " +
                                DTypeName(array.dtype) + " but the variable is " +
                                DTypeName(output.dtype));
  }
  if (array.shape != logical_shape) {
    return InvalidArgumentError("initializer npy_path '" + path + "': shape " +
                                array.shape.ToString() + " differs from the variable's " +
                                logical_shape.ToString());
  }
  // Contiguous runs of (end - begin) * inner elements, one per outer block.
  int64_t element_bytes = SizeOf(output.dtype);
  int64_t run_bytes = (geometry.end - geometry.begin) * geometry.inner * element_bytes;
  if (run_bytes == 0) return Status::Ok();  // An empty part may come with a null view.
  for (int64_t o = 0; o < geometry.outer; ++o) {
    const char* from = array.data.data() +
                       (o * geometry.axis_extent + geometry.begin) * geometry.inner * element_bytes;
    std::memcpy(static_cast<char*>(output.data) + o * run_bytes, from,
                static_cast<size_t>(run_bytes));
  }
  return Status::Ok();
}

}  // namespace

Status InitializeVariable(const proto::Initializer& initializer, const Shape& logical_shape,
                          const VariablePart& part, const DataRoot& data_root,
                          const TensorView& output) {
  SOFTWIRE_ASSIGN_OR_RETURN(PartGeometry geometry, GeometryOf(logical_shape, part));
  bool known_dtype = output.dtype == DType::kFloat32 || output.dtype == DType::kInt32;
  if (!known_dtype || output.shape != geometry.part_shape) {
    return InvalidArgumentError(std::string("initializer output is a ") + DTypeName(output.dtype) +
                                " " + output.shape.ToString() +
                                " view, expected float32 or int32 " +
                                geometry.part_shape.ToString());
  }
  if (output.data == nullptr && geometry.NumElements() > 0) {
    return InvalidArgumentError("initializer output view has no memory");
  }
  bool random = initializer.has_normal() || initializer.has_uniform();
  if (random && output.dtype != DType::kFloat32) {
    return InvalidArgumentError(
        std::string("initializer ") + (initializer.has_normal() ? "normal" : "uniform") +
        " needs a float32 variable, this one is " + DTypeName(output.dtype));
  }
  switch (initializer.kind_case()) {
    case proto::Initializer::kConstant:
      return FillConstant(initializer.constant().value(), geometry, output);
    case proto::Initializer::kNormal:
      return FillNormal(initializer.normal(), geometry, static_cast<float*>(output.data));
    case proto::Initializer::kUniform:
      return FillUniform(initializer.uniform(), geometry, static_cast<float*>(output.data));
    case proto::Initializer::kNpyPath: {
      SOFTWIRE_ASSIGN_OR_RETURN(std::string path,
                                ResolveDataPath(data_root, initializer.npy_path()));
      return FillFromNpy(path, logical_shape, geometry, output);
    }
    case proto::Initializer::KIND_NOT_SET:
      break;
  }
  return InvalidArgumentError(
      "initializer has no kind set (one of constant, normal, uniform, npy_path)");
}

}  // namespace data
}  // namespace softwire
