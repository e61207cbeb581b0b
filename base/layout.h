// Layout: how the elements of an image batch [N, C, H, W] lie in memory (docs/LAYOUTS.md).
// Dims always name the logical NCHW tensor; the layout says where each element is.
//
// Every layout here is "nC(HW)b" with a channel block b: the batch is outermost, then blocks
// of b channels, then the H * W positions, then the b channels of a block, innermost:
//   offset(n, c, h, w) = ((n * C / b + c / b) * H * W + h * W + w) * b + c % b
// kPlain is b = 1 (NCHW), kNhwc is b = C (channels last), kNChw16c is b = 16 (oneDNN's
// nChw16c, what its avx512 convolution kernels run on). N outermost in all three, so a slice of
// the batch is a contiguous range of bytes in every layout.
#ifndef SOFTWIRE_BASE_LAYOUT_H_
#define SOFTWIRE_BASE_LAYOUT_H_

#include <cstdint>
#include <string>

#include "base/shape.h"
#include "base/status.h"

namespace softwire {

// Mirrors proto Layout.
enum class Layout : int {
  kPlain = 0,    // Row-major as the dims say (NCHW for images).
  kNhwc = 1,     // Channels last.
  kNChw16c = 2,  // Blocks of 16 channels innermost; C a multiple of 16.
};

// "nchw", "nhwc", "nChw16c".
const char* LayoutName(Layout layout);
// Inverse of LayoutName ("plain" is accepted for nchw, "blocked" for nChw16c).
StatusOr<Layout> ParseLayout(const std::string& name);

// Whether a tensor of `shape` can be held in `layout`: always for kPlain; for the others rank
// 4, and for kNChw16c a channel count that 16 divides (no padding: every layout of a tensor
// holds the same bytes).
bool LayoutFits(Layout layout, const Shape& shape);

// The channel block b of `layout` for `channels` channels: 1, channels or 16.
int64_t ChannelBlock(Layout layout, int64_t channels);

// Where an image batch's elements lie, for kernels that loop per channel: element (n, c, s)
// with s = h * W + w is at n * image + (c / block) * block_stride + s * block + c % block.
struct ImageLayout {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t spatial = 0;  // H * W.
  int64_t block = 1;
  int64_t image = 0;         // C * H * W.
  int64_t block_stride = 0;  // spatial * block.

  // `shape` must be rank 4 (or rank >= 2 for kPlain, the trailing axes taken as spatial).
  static ImageLayout Of(Layout layout, const Shape& shape);
  int64_t Offset(int64_t n, int64_t c, int64_t s) const {
    return n * image + (c / block) * block_stride + s * block + c % block;
  }
};

}  // namespace softwire

#endif  // SOFTWIRE_BASE_LAYOUT_H_
