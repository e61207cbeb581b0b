#include "base/layout.h"

namespace softwire {

const char* LayoutName(Layout layout) {
  switch (layout) {
    case Layout::kPlain:
      return "nchw";
    case Layout::kNhwc:
      return "nhwc";
    case Layout::kNChw16c:
      return "nChw16c";
  }
  return "nchw";
}

StatusOr<Layout> ParseLayout(const std::string& name) {
  if (name == "nchw" || name == "plain") return Layout::kPlain;
  if (name == "nhwc") return Layout::kNhwc;
  if (name == "nChw16c" || name == "nchw16c" || name == "blocked") return Layout::kNChw16c;
  return InvalidArgumentError("unknown layout '" + name + "' (expected nchw, nhwc or nChw16c)");
}

bool LayoutFits(Layout layout, const Shape& shape) {
  switch (layout) {
    case Layout::kPlain:
      return true;
    case Layout::kNhwc:
      return shape.rank() == 4;
    case Layout::kNChw16c:
      return shape.rank() == 4 && shape.dim(1) % 16 == 0;
  }
  return false;
}

int64_t ChannelBlock(Layout layout, int64_t channels) {
  switch (layout) {
    case Layout::kPlain:
      return 1;
    case Layout::kNhwc:
      return channels;
    case Layout::kNChw16c:
      return 16;
  }
  return 1;
}

ImageLayout ImageLayout::Of(Layout layout, const Shape& shape) {
  ImageLayout image;
  image.batch = shape.dim(0);
  image.channels = shape.dim(1);
  image.spatial = shape.NumElements(2, shape.rank());
  image.block = ChannelBlock(layout, image.channels);
  image.image = image.channels * image.spatial;
  image.block_stride = image.spatial * image.block;
  return image;
}

}  // namespace softwire
