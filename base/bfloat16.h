// BFloat16: the 16-bit brain floating-point format (1 sign, 8 exponent, 7 fraction bits): the
// upper half of an IEEE binary32. It keeps float32's range with 8 significant bits, so a
// product of two bfloat16 values is exact in float32 and a sum of them loses only what float32
// sums lose. Mixed precision (docs/PRECISION.md) stores product inputs in it.
//
//   BFloat16 h = ToBFloat16(3.14159f);  // 3.140625: round to nearest, ties to even.
//   float f = ToFloat(h);               // exact: every bfloat16 is a float32.
//   double r = RoundToBFloat16(0.1);    // 0.10009765625, what the reference stores.
#ifndef SOFTWIRE_BASE_BFLOAT16_H_
#define SOFTWIRE_BASE_BFLOAT16_H_

#include <cstdint>
#include <cstring>

namespace softwire {

// The bits of one bfloat16. A plain struct (not an arithmetic type), so no value converts to
// or from it by accident.
struct BFloat16 {
  uint16_t bits = 0;
};

// Exact.
inline float ToFloat(BFloat16 value) {
  const uint32_t bits = static_cast<uint32_t>(value.bits) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

// Round to nearest, ties to even (what oneDNN and the bf16 instructions do). Infinities stay
// infinite, finite values above the largest bfloat16 round to infinity, NaN stays a (quiet)
// NaN. Branch-free, so loops of it vectorise.
inline BFloat16 ToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint32_t rounded = bits + 0x7fffu + ((bits >> 16) & 1u);
  const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return BFloat16{static_cast<uint16_t>(nan ? ((bits >> 16) | 0x40u) : (rounded >> 16))};
}

// `value` rounded once to the nearest bfloat16 (ties to even), as a double: the reference
// interpreter's cast. Subnormals keep bfloat16's fixed spacing 2^-133; finite values whose
// rounding exceeds the largest bfloat16 become infinite.
double RoundToBFloat16(double value);

}  // namespace softwire

#endif  // SOFTWIRE_BASE_BFLOAT16_H_
