#include "base/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

namespace softwire {
namespace {

TEST(RandomTest, ValuesDependOnlyOnSeedAndIndex) {
  EXPECT_EQ(NormalAt(7, 12345), NormalAt(7, 12345));
  EXPECT_NE(NormalAt(7, 12345), NormalAt(8, 12345));
  EXPECT_NE(NormalAt(7, 12345), NormalAt(7, 12346));
}

TEST(RandomTest, NormalSamplesHaveUnitMomentsWithinSamplingError) {
  constexpr int kSamples = 200000;
  double sum = 0, sum_of_squares = 0;
  for (int i = 0; i < kSamples; ++i) {
    double value = NormalAt(3, i);
    sum += value;
    sum_of_squares += value * value;
  }
  double mean = sum / kSamples;
  double variance = sum_of_squares / kSamples - mean * mean;
  // Standard error of the mean is 1/sqrt(2e5) ~ 0.0022; allow 5 sigma.
  EXPECT_NEAR(mean, 0.0, 0.011);
  EXPECT_NEAR(variance, 1.0, 0.02);
}

TEST(RandomTest, FillNormalsGivesTheScalarValuesForAnyStartAndCount) {
  // Starts and counts that are not multiples of the vector width, and one large run.
  for (const auto& [first, count] : std::vector<std::pair<uint64_t, int64_t>>{
           {0, 0}, {0, 1}, {5, 3}, {7, 4}, {1000003, 13}, {123456789, 100000}}) {
    std::vector<float> filled(static_cast<size_t>(count) + 1, -7.0f);
    FillNormals(42, first, count, filled.data());
    int64_t differing = 0;
    for (int64_t i = 0; i < count; ++i) {
      differing += filled[static_cast<size_t>(i)] !=
                   static_cast<float>(NormalAt(42, first + static_cast<uint64_t>(i)));
    }
    EXPECT_EQ(differing, 0) << "first " << first << " count " << count;
    EXPECT_EQ(filled[static_cast<size_t>(count)], -7.0f) << "wrote past the end";
  }
}

TEST(RandomTest, UniformIntegersCoverTheirRange) {
  int counts[10] = {};
  for (int i = 0; i < 100000; ++i) ++counts[UniformIntAt(5, i, 10)];
  for (int count : counts) EXPECT_NEAR(count, 10000, 500);
}

}  // namespace
}  // namespace softwire
