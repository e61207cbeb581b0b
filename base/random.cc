#include "base/random.h"

#include <cmath>

namespace softwire {
namespace {

uint64_t SplitMix64(uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

}  // namespace

uint64_t HashCounter(uint64_t seed, uint64_t counter) {
  return SplitMix64(SplitMix64(seed) ^ SplitMix64(counter + 0x632be59bd9b4e019ULL));
}

double UniformAt(uint64_t seed, uint64_t index) {
  return static_cast<double>(HashCounter(seed, index) >> 11) * 0x1.0p-53;
}

double NormalAt(uint64_t seed, uint64_t index) {
  // 1 - u keeps the logarithm's argument in (0, 1].
  double u1 = 1.0 - UniformAt(seed, 2 * index);
  double u2 = UniformAt(seed, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

int64_t UniformIntAt(uint64_t seed, uint64_t index, int64_t bound) {
  // The modulo bias is below 2^-40 for any bound under 2^24; good enough for data sampling.
  return static_cast<int64_t>(HashCounter(seed, index) % static_cast<uint64_t>(bound));
}

}  // namespace softwire
