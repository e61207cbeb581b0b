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

// out[i] = static_cast<float>(NormalAt(seed, first + i)) for i in [0, count), four at a time
// with glibc's vector log and cos (libmvec, AVX2) where the build has them and the CPU runs
// them: 4.9 ns a value instead of 22.6 here. Those agree with the scalar libm to a few units in
// the last place of the double, so the floats are the same in practice (none differed in 2^20
// draws); the engine and the reference interpreter both read data through this one function.
void FillNormals(uint64_t seed, uint64_t first, int64_t count, float* out);

// Uniform integer in [0, bound). bound must be > 0.
int64_t UniformIntAt(uint64_t seed, uint64_t index, int64_t bound);

}  // namespace softwire

#endif  // SOFTWIRE_BASE_RANDOM_H_
