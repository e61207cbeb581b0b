// bf16_arrays: the array conversions equal base/bfloat16.h's scalar ones bit for bit, on every
// kind of value (ties both ways, NaNs, infinities, subnormals, signed zeros) and every length
// and alignment the vector loops' remainders can take. CTest runs it twice: on the
// implementation this CPU picks, and with SOFTWIRE_CPU_FEATURES_OFF=avx512bw (the portable one).
#include "runtime/kernels/cpu/bf16_arrays.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/cpu_features.h"

namespace softwire {
namespace runtime {
namespace {

float FromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint32_t BitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// Values that exercise every branch of the rounding, then a sweep of bit patterns.
std::vector<float> Values() {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               -1.0f,
                               FromBits(0x3f808000u),  // Tie, even below: rounds down.
                               FromBits(0x3f818000u),  // Tie, odd below: rounds up.
                               FromBits(0x3f80ffffu),
                               FromBits(0x7f7fffffu),  // Largest finite: rounds to infinity.
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               FromBits(0x7f800001u),  // Signalling NaN: stays a NaN.
                               FromBits(0xff800001u),
                               FromBits(0x00000001u),  // Smallest subnormal.
                               FromBits(0x00018000u),
                               FromBits(0x807fffffu)};
  for (uint32_t bits = 0; bits < 0xffff0000u; bits += 0x00fedcbau) values.push_back(FromBits(bits));
  return values;
}

TEST(BFloat16ArraysTest, RunsTheImplementationTheCpuAndEnvironmentAllow) {
  const char* off = std::getenv("SOFTWIRE_CPU_FEATURES_OFF");
  const bool hidden = off != nullptr && std::string(off).find("avx512bw") != std::string::npos;
  const bool wide = !hidden && DetectCpuFeatures().avx512bw;
#if defined(__x86_64__)
  EXPECT_STREQ(BFloat16ArraysImplementation(), wide ? "avx512bw" : "portable");
#else
  EXPECT_STREQ(BFloat16ArraysImplementation(), "portable");
#endif
}

TEST(BFloat16ArraysTest, ConvertEqualsTheScalarRounding) {
  const std::vector<float> values = Values();
  for (size_t offset = 0; offset < 3; ++offset) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{67},
                         values.size() - offset}) {
      std::vector<BFloat16> converted(count + 1, BFloat16{0xabcd});
      ConvertToBFloat16(values.data() + offset, converted.data(), static_cast<int64_t>(count));
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(converted[i].bits, ToBFloat16(values[offset + i]).bits)
            << "value bits 0x" << std::hex << BitsOf(values[offset + i]);
      }
      EXPECT_EQ(converted[count].bits, 0xabcd) << "wrote past the end";
    }
  }
}

TEST(BFloat16ArraysTest, RoundThroughKeepsTheRoundedValueInFloat32) {
  const std::vector<float> values = Values();
  std::vector<float> rounded(values.size());
  RoundThroughBFloat16(values.data(), rounded.data(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(BitsOf(rounded[i]), BitsOf(ToFloat(ToBFloat16(values[i]))))
        << "value bits 0x" << std::hex << BitsOf(values[i]);
  }
}

TEST(BFloat16ArraysTest, TruncateIsExactOnValuesThatAreBFloat16Already) {
  std::vector<float> values;
  for (float value : Values()) values.push_back(ToFloat(ToBFloat16(value)));
  std::vector<BFloat16> truncated(values.size());
  TruncateToBFloat16(values.data(), truncated.data(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(truncated[i].bits, ToBFloat16(values[i]).bits);
  }
  // And it truncates, not rounds, what is not: the caller's promise matters.
  const float between = FromBits(0x3f80ffffu);
  BFloat16 one;
  TruncateToBFloat16(&between, &one, 1);
  EXPECT_EQ(one.bits, 0x3f80);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
