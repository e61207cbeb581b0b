#include "base/bfloat16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "base/dtype.h"

namespace softwire {
namespace {

float FloatOfBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

TEST(BFloat16Test, EveryBFloat16SurvivesARoundTripThroughFloat) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const BFloat16 value{static_cast<uint16_t>(bits)};
    const float widened = ToFloat(value);
    if (std::isnan(widened)) {
      EXPECT_TRUE(std::isnan(ToFloat(ToBFloat16(widened)))) << bits;
      continue;
    }
    EXPECT_EQ(ToBFloat16(widened).bits, bits);
    EXPECT_EQ(RoundToBFloat16(static_cast<double>(widened)), static_cast<double>(widened));
  }
}

TEST(BFloat16Test, RoundsToNearestWithTiesToEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: the even neighbour (1) wins.
  EXPECT_EQ(ToFloat(ToBFloat16(1.0f + 0x1p-8f)), 1.0f);
  // 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: the even one is 1 + 2^-6.
  EXPECT_EQ(ToFloat(ToBFloat16(1.0f + 3 * 0x1p-8f)), 1.0f + 0x1p-6f);
  // Just above the halfway point rounds up.
  EXPECT_EQ(ToFloat(ToBFloat16(1.0f + 0x1p-8f + 0x1p-20f)), 1.0f + 0x1p-7f);
  EXPECT_EQ(ToFloat(ToBFloat16(3.14159f)), 3.140625f);
  EXPECT_EQ(RoundToBFloat16(1.0 + 0x1p-8), 1.0);
  EXPECT_EQ(RoundToBFloat16(1.0 + 3 * 0x1p-8), 1.0 + 0x1p-6);
  EXPECT_EQ(RoundToBFloat16(-3.14159), -3.140625);
  EXPECT_EQ(RoundToBFloat16(0.1), 0.10009765625);
}

TEST(BFloat16Test, FloatAndDoubleRoundingAgreeOnFloats) {
  // Every float32 is exact in double, so rounding it either way must agree (one rounding).
  uint32_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 1664525u + 1013904223u;
    const float value = FloatOfBits(state);
    if (!std::isfinite(value)) continue;
    const double expected = RoundToBFloat16(static_cast<double>(value));
    EXPECT_EQ(static_cast<double>(ToFloat(ToBFloat16(value))), expected) << value;
  }
}

TEST(BFloat16Test, KeepsInfinitiesAndNaNAndOverflowsToInfinity) {
  const float infinity = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ToFloat(ToBFloat16(infinity)), infinity);
  EXPECT_EQ(ToFloat(ToBFloat16(-infinity)), -infinity);
  EXPECT_TRUE(std::isnan(ToFloat(ToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
  // A signalling NaN whose payload sits in the low bits only must not become infinity.
  EXPECT_TRUE(std::isnan(ToFloat(ToBFloat16(FloatOfBits(0x7f800001u)))));
  EXPECT_EQ(ToFloat(ToBFloat16(std::numeric_limits<float>::max())), infinity);
  EXPECT_EQ(RoundToBFloat16(3.4e38), std::numeric_limits<double>::infinity());
  EXPECT_EQ(RoundToBFloat16(0x1p-133), 0x1p-133);  // The smallest subnormal.
  EXPECT_EQ(RoundToBFloat16(0x1p-135), 0.0);
}

TEST(BFloat16Test, HasTwoBytesAndANameThatParsesBack) {
  EXPECT_EQ(SizeOf(DType::kBFloat16), 2);
  EXPECT_STREQ(DTypeName(DType::kBFloat16), "bfloat16");
  EXPECT_EQ(*ParseDType("bfloat16"), DType::kBFloat16);
  EXPECT_EQ(*ParseDType("bf16"), DType::kBFloat16);
}

}  // namespace
}  // namespace softwire
