// OneDnnConvolution: one of the three products of a 2-D convolution over NCHW images (forward,
// backward data, backward weights) through oneDNN's convolution primitives, created once per
// kernel (so once per shape: primitives are cached by the kernel that owns them).
//
// Threading: oneDNN runs single-threaded on each of the device's threads (primitives made for one
// thread, onednn_threads.h; no OpenMP pool beside them, as for the bf16 products:
// docs/KERNELS.md). The batch is cut into lanes, at most
// kMaxLanes, one primitive per lane size (two sizes at most), each lane with its own memory
// objects, stream and user scratchpad; Run spreads the lanes over `parallel`. Backward weights
// sums the lanes' filter gradients, kept in buffers owned by the object.
//
// Layouts: the slots hold OIHW filters and images in the layouts the plan gives them
// (ConvolutionShape::x_layout, y_layout; base/layout.h): NCHW, NHWC or nChw16c, as the
// compiler's choose_layouts pass chose them (docs/LAYOUTS.md). An image operand in NHWC or
// nChw16c is described to oneDNN as exactly that, so the primitive reads and writes the slot
// itself; a plain NCHW one (and the filters) is described as `any`, so oneDNN picks its fastest
// kernels (its blocked formats with jit:avx512_core rather than gemm-based ones on NCHW) and
// the lane reorders the operand in (or the output out) through a buffer it owns.
//
// Types: inputs float32, or bfloat16 (the precision policy's products) accumulated and written
// in float32. bfloat16 runs natively where the CPU has it (base/cpu_features.h), all three
// passes; elsewhere the inputs are widened to float32 into buffers owned by the object first
// (exact). The forward and backward data passes may
// write bfloat16
// (`output_dtype`: activations kept in bf16 between convolutions, docs/PRECISION.md): oneDNN
// accumulates in float32 and rounds once as it stores; where the inputs were widened, the
// float32 result is rounded into the slot after the primitive (the same rounding).
//
// Failure: Create returns InvalidArgument when oneDNN rejects the shape, or Unimplemented when
// the build has no oneDNN. Run never fails.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_ONEDNN_CONVOLUTION_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_ONEDNN_CONVOLUTION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "base/dtype.h"
#include "base/image_window.h"
#include "base/layout.h"
#include "base/shape.h"
#include "base/status.h"
#include "runtime/kernels/parallel_runner.h"

namespace softwire {
namespace runtime {

enum class ConvolutionPass {
  kForward,          // (x, w[, bias]) -> y
  kBackwardData,     // (dy, w) -> dx
  kBackwardWeights,  // (dy, x) -> dw
};

struct ConvolutionShape {
  Shape x;  // [N, C, H, W]
  Shape w;  // [O, C / groups, KH, KW]
  Shape y;  // [N, O, OH, OW]
  int64_t groups = 1;
  ImageWindow window;
  bool has_bias = false;                // Forward only.
  DType input_dtype = DType::kFloat32;  // Of both product inputs: float32 or bfloat16.
  // Of y (forward) or dx (backward data): float32, or bfloat16 with bfloat16 inputs.
  // Backward weights: float32.
  DType output_dtype = DType::kFloat32;
  Layout x_layout = Layout::kPlain;  // Of x (dx for backward data).
  Layout y_layout = Layout::kPlain;  // Of y (dy for the backward passes).
};

class OneDnnConvolution {
 public:
  virtual ~OneDnnConvolution() = default;

  static StatusOr<std::unique_ptr<OneDnnConvolution>> Create(ConvolutionPass pass,
                                                             const ConvolutionShape& shape);

  // Forward: a = x, b = w, bias (float32, may be null without one), out = y.
  // Backward data: a = dy, b = w, out = dx. Backward weights: a = dy, b = x, out = dw.
  // a and b are float32 or bfloat16 as the shape says; out is float32 or bfloat16
  // (output_dtype).
  virtual void Run(ParallelRunner* parallel, const void* a, const void* b, const float* bias,
                   void* out) = 0;

  // oneDNN's name of the implementation ("gemm:jit", "jit:avx512_core", ...).
  virtual std::string implementation() const = 0;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_ONEDNN_CONVOLUTION_H_
