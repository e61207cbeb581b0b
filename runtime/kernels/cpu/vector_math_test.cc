// vector_math.h's building blocks, compiled with the kernel library's flags (see CMakeLists).
#include "runtime/kernels/cpu/vector_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace softwire {
namespace runtime {
namespace {

TEST(VectorMath, ExpIsWithinOneTenMillionthRelativeOverItsRange) {
  double worst = 0;
  for (double x = -87.0; x <= 88.0; x += 1e-3) {
    const float argument = static_cast<float>(x);
    const double exact = std::exp(static_cast<double>(argument));
    worst = std::max(worst, std::abs(Exp(argument) - exact) / exact);
  }
  EXPECT_LT(worst, 1e-7);
}

TEST(VectorMath, ExpSaturatesOutsideItsRangeAndKeepsNaN) {
  EXPECT_EQ(Exp(-1000.0f), Exp(-87.0f));
  EXPECT_EQ(Exp(1000.0f), Exp(88.0f));
  EXPECT_TRUE(std::isfinite(Exp(1000.0f)));
  EXPECT_TRUE(std::isnan(Exp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(Exp(0.0f), 1.0f);
}

TEST(VectorMath, RowReductionsMatchPlainLoopsAtEveryLength) {
  for (int64_t n = 1; n <= 70; ++n) {
    std::vector<float> x(n);
    std::vector<float> y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>((i * 37) % 11) - 5.0f;  // Small integers: sums are exact.
      y[i] = static_cast<float>((i * 13) % 7) - 3.0f;
    }
    float sum = 0;
    float dot = 0;
    float squares = 0;
    float maximum = x[0];
    for (int64_t i = 0; i < n; ++i) {
      sum += x[i];
      dot += x[i] * y[i];
      squares += (x[i] - 1.0f) * (x[i] - 1.0f);
      maximum = std::max(maximum, x[i]);
    }
    EXPECT_EQ(RowSum(x.data(), n), sum) << n;
    EXPECT_EQ(RowDot(x.data(), y.data(), n), dot) << n;
    EXPECT_EQ(RowSumSquaredDeviations(x.data(), n, 1.0f), squares) << n;
    EXPECT_EQ(RowMax(x.data(), n), maximum) << n;
  }
}

TEST(VectorMath, RowSumExpIsTheSumOfExps) {
  std::vector<float> x = {0.5f, -1.0f, 2.0f, 0.0f, -3.0f};
  double exact = 0;
  for (float value : x) exact += std::exp(static_cast<double>(value) - 2.0);
  EXPECT_NEAR(RowSumExp(x.data(), 5, 2.0f), exact, 1e-6);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
