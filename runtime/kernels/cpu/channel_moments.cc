#include "runtime/kernels/cpu/channel_moments.h"

#include "runtime/kernels/cpu/bfloat16_access.h"

namespace softwire {
namespace runtime {
namespace {

template <typename T>
ChannelMoments Moments(const PlainChannels& shape, const T* x, int64_t channel) {
  const int64_t stride = shape.channels * shape.spatial;
  const T* first_row = x + channel * shape.spatial;
  double sum = 0;
  for (int64_t n = 0; n < shape.batch; ++n) {
    const T* row = first_row + n * stride;
    for (int64_t s = 0; s < shape.spatial; ++s) sum += Load(row[s]);
  }
  ChannelMoments moments;
  moments.count = static_cast<double>(shape.batch * shape.spatial);
  moments.mean = sum / moments.count;
  const double mean = moments.mean;
  double squares = 0;
  for (int64_t n = 0; n < shape.batch; ++n) {
    const T* row = first_row + n * stride;
    for (int64_t s = 0; s < shape.spatial; ++s) {
      const double deviation = Load(row[s]) - mean;
      squares += deviation * deviation;
    }
  }
  moments.squared_deviations = squares;
  return moments;
}

}  // namespace

ChannelMoments ComputeChannelMoments(const PlainChannels& shape, const float* x, int64_t channel) {
  return Moments(shape, x, channel);
}

ChannelMoments ComputeChannelMoments(const PlainChannels& shape, const BFloat16* x,
                                     int64_t channel) {
  return Moments(shape, x, channel);
}

}  // namespace runtime
}  // namespace softwire
