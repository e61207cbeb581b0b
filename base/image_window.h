// ImageWindow: the geometry of a 2-D window sliding over NCHW images, shared by conv2d,
// max_pool2d and avg_pool2d in the compiler (shape inference), the cpu kernels and the reference
// kernels, so that all three agree on output extents and reject the same attributes.
//
// Along each spatial axis a (0: height, 1: width) with input extent I, kernel K, stride S,
// padding P (both sides) and dilation D, the window covers D * (K - 1) + 1 input positions and
// the output extent is (I + 2P - (D (K - 1) + 1)) / S + 1 (PyTorch's formula, rounding down).
//
// Failure: MakeImageWindow returns InvalidArgument naming the attribute at fault ('strides',
// 'padding', 'dilation', 'kernel') or, for a window larger than its padded input, both extents.
// Pure functions; thread-safe.
#ifndef SOFTWIRE_BASE_IMAGE_WINDOW_H_
#define SOFTWIRE_BASE_IMAGE_WINDOW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace softwire {

struct ImageWindow {
  int64_t input[2] = {0, 0};  // Input height and width.
  int64_t kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  int64_t output[2] = {0, 0};  // Output height and width.

  // D * (K - 1) + 1 along `axis`.
  int64_t DilatedKernel(int axis) const { return dilation[axis] * (kernel[axis] - 1) + 1; }
};

// `kernel`, `strides`, `padding` and `dilation` each hold [height, width]; empty `strides`
// means [1, 1] (pooling's default, the kernel's extents, is the caller's to pass), empty
// `padding` [0, 0], empty `dilation` [1, 1]. `kernel_field` names where the kernel came from in
// errors ("attribute 'kernel'", "input 'w'").
StatusOr<ImageWindow> MakeImageWindow(int64_t input_height, int64_t input_width,
                                      const std::vector<int64_t>& kernel,
                                      const std::string& kernel_field,
                                      const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& padding,
                                      const std::vector<int64_t>& dilation);

}  // namespace softwire

#endif  // SOFTWIRE_BASE_IMAGE_WINDOW_H_
