// The per-channel statistics loop of the normalisation kernels over a plain image batch.
//
// x [N, C, S] in plain layout (S = the product of the axes after the channels): channel c's
// elements are N rows of S contiguous elements (float32, or bfloat16 where activations stay in
// bf16 between convolutions), `C * S` apart. ChannelMoments sums them in double
// in two passes (the mean first, then the squared deviations from it): a channel holds N * S
// elements, often tens of thousands, where float32 sums would lose digits, and a one-pass
// sum of squares would cancel when |mean| >> stddev.
//
// Threading: reads x only; callers run it for disjoint channels on the device's threads.
// Allocates nothing.
#ifndef SOFTWIRE_RUNTIME_KERNELS_CPU_CHANNEL_MOMENTS_H_
#define SOFTWIRE_RUNTIME_KERNELS_CPU_CHANNEL_MOMENTS_H_

#include <cstdint>

#include "base/bfloat16.h"

namespace softwire {
namespace runtime {

// x viewed as [batch, channels, spatial], plain.
struct PlainChannels {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t spatial = 0;
};

// One channel's mean and its sum of squared deviations from the mean, over `count` elements.
// The biased variance is squared_deviations / count, the unbiased one
// squared_deviations / (count - 1).
struct ChannelMoments {
  double mean = 0;
  double squared_deviations = 0;
  double count = 0;
};

// The moments of channel `channel` (in [0, shape.channels)) of x; shape.batch * shape.spatial
// must be > 0.
ChannelMoments ComputeChannelMoments(const PlainChannels& shape, const float* x, int64_t channel);
ChannelMoments ComputeChannelMoments(const PlainChannels& shape, const BFloat16* x,
                                     int64_t channel);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_KERNELS_CPU_CHANNEL_MOMENTS_H_
