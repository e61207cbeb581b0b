#include "base/random.h"

#include <gtest/gtest.h>

#include <cmath>

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

TEST(RandomTest, UniformIntegersCoverTheirRange) {
  int counts[10] = {};
  for (int i = 0; i < 100000; ++i) ++counts[UniformIntAt(5, i, 10)];
  for (int count : counts) EXPECT_NEAR(count, 10000, 500);
}

}  // namespace
}  // namespace softwire
