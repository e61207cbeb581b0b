// Counter-based random numbers: value i of stream `seed` depends only on (seed, i).
//
// Variable initializers and synthetic data use these, so a tensor's element has the same value
// whether the tensor is created whole or as any slice on any device, and the reference
// interpreter sees exactly the values the runtime sees.
#ifndef SOFTWIRE_BASE_RANDOM_H_
#define SOFTWIRE_BASE_RANDOM_H_

#include <cstdint>

namespace softwire {

// A 64-bit hash of (seed, counter) with good avalanche (SplitMix64 finaliser on both words).
uint64_t HashCounter(uint64_t seed, uint64_t counter);

// Uniform in [0, 1), 53 random bits.
double UniformAt(uint64_t seed, uint64_t index);

// Standard normal, Box-Muller on the uniforms at 2*index and 2*index+1.
double NormalAt(uint64_t seed, uint64_t index);

// Uniform integer in [0, bound). bound must be > 0.
int64_t UniformIntAt(uint64_t seed, uint64_t index, int64_t bound);

}  // namespace softwire

#endif  // SOFTWIRE_BASE_RANDOM_H_
