#include "base/image_window.h"

namespace softwire {
namespace {

std::string Pair(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::to_string(values[i]);
  }
  return text + "]";
}

// Copies `values` (two entries, each >= minimum) into `out`; empty keeps `out` as it is.
Status ReadPair(const std::vector<int64_t>& values, const std::string& field, int64_t minimum,
                int64_t* out) {
  if (values.empty()) return Status::Ok();
  if (values.size() != 2) {
    return InvalidArgumentError(field + " must be [height, width], got " + Pair(values));
  }
  for (int axis = 0; axis < 2; ++axis) {
    if (values[axis] < minimum) {
      return InvalidArgumentError(field + " must be >= " + std::to_string(minimum) + ", got " +
                                  Pair(values));
    }
    out[axis] = values[axis];
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ImageWindow> MakeImageWindow(int64_t input_height, int64_t input_width,
                                      const std::vector<int64_t>& kernel,
                                      const std::string& kernel_field,
                                      const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& padding,
                                      const std::vector<int64_t>& dilation) {
  ImageWindow window;
  window.input[0] = input_height;
  window.input[1] = input_width;
  if (kernel.size() != 2) {
    return InvalidArgumentError(kernel_field + " must give a kernel [height, width], got " +
                                Pair(kernel));
  }
  SOFTWIRE_RETURN_IF_ERROR(ReadPair(kernel, kernel_field, 1, window.kernel));
  SOFTWIRE_RETURN_IF_ERROR(ReadPair(strides, "attribute 'strides'", 1, window.stride));
  SOFTWIRE_RETURN_IF_ERROR(ReadPair(padding, "attribute 'padding'", 0, window.padding));
  SOFTWIRE_RETURN_IF_ERROR(ReadPair(dilation, "attribute 'dilation'", 1, window.dilation));
  static const char* const kAxisNames[2] = {"height", "width"};
  for (int axis = 0; axis < 2; ++axis) {
    const int64_t padded = window.input[axis] + 2 * window.padding[axis];
    const int64_t covered = window.DilatedKernel(axis);
    if (covered > padded) {
      return InvalidArgumentError(
          kernel_field + ": kernel " + kAxisNames[axis] + " " +
          std::to_string(window.kernel[axis]) +
          (window.dilation[axis] > 1 ? " (dilated: " + std::to_string(covered) + ")" : "") +
          " is larger than the padded input " + kAxisNames[axis] + " " + std::to_string(padded) +
          " (" + std::to_string(window.input[axis]) + " + 2 * padding " +
          std::to_string(window.padding[axis]) + ")");
    }
    window.output[axis] = (padded - covered) / window.stride[axis] + 1;
  }
  return window;
}

}  // namespace softwire
