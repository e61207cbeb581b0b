// The arithmetic of base/random.h's counter-based numbers, header-only so that the host and a
// GPU kernel (nvcc) compute the same values from the same code: value i of stream `seed`
// depends only on (seed, i) on either side (the cuda synthetic source, runtime/kernels/cuda/).
//
// Plain integer and double arithmetic; no state, no allocation.
#ifndef SOFTWIRE_BASE_COUNTER_HASH_H_
#define SOFTWIRE_BASE_COUNTER_HASH_H_

#include <cstdint>

#if defined(__CUDACC__)
#define SOFTWIRE_HOST_DEVICE __host__ __device__
#else
#define SOFTWIRE_HOST_DEVICE
#endif

namespace softwire {
namespace counter_hash {

// SplitMix64's finaliser with its increment.
SOFTWIRE_HOST_DEVICE inline uint64_t SplitMix64(uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

// HashCounter(seed, counter) with SplitMix64(seed) computed once by the caller.
SOFTWIRE_HOST_DEVICE inline uint64_t HashMixed(uint64_t mixed_seed, uint64_t counter) {
  return SplitMix64(mixed_seed ^ SplitMix64(counter + 0x632be59bd9b4e019ULL));
}

// The top 53 bits as a double in [0, 1).
SOFTWIRE_HOST_DEVICE inline double UnitOf(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// UniformIntAt's value from the hash: the modulo bias is below 2^-40 for bounds under 2^24.
SOFTWIRE_HOST_DEVICE inline int64_t IntOf(uint64_t bits, int64_t bound) {
  return static_cast<int64_t>(bits % static_cast<uint64_t>(bound));
}

}  // namespace counter_hash
}  // namespace softwire

#endif  // SOFTWIRE_BASE_COUNTER_HASH_H_
