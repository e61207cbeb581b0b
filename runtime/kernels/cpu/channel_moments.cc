#include "runtime/kernels/cpu/channel_moments.h"

namespace softwire {
namespace runtime {

ChannelMoments ComputeChannelMoments(const PlainChannels& shape, const float* x, int64_t channel) {
  const int64_t stride = shape.channels * shape.spatial;
  const float* first_row = x + channel * shape.spatial;
  double sum = 0;
  for (int64_t n = 0; n < shape.batch; ++n) {
    const float* row = first_row + n * stride;
    for (int64_t s = 0; s < shape.spatial; ++s) sum += row[s];
  }
  ChannelMoments moments;
  moments.count = static_cast<double>(shape.batch * shape.spatial);
  moments.mean = sum / moments.count;
  const double mean = moments.mean;
  double squares = 0;
  for (int64_t n = 0; n < shape.batch; ++n) {
    const float* row = first_row + n * stride;
    for (int64_t s = 0; s < shape.spatial; ++s) squares += (row[s] - mean) * (row[s] - mean);
  }
  moments.squared_deviations = squares;
  return moments;
}

}  // namespace runtime
}  // namespace softwire
