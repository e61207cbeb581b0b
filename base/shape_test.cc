#include "base/shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace softwire {
namespace {

TEST(ShapeTest, NumElementsIsTheProductOfTheExtents) {
  EXPECT_EQ(Shape().NumElements(), 1);
  EXPECT_EQ(Shape({1 << 20, 1 << 20}).NumElements(), int64_t{1} << 40);
  EXPECT_EQ(Shape({2, 3, 4}).NumElements(1, 3), 12);
}

// Shapes come from input (job dims, .npy headers): measuring one must never be undefined.
TEST(ShapeTest, NumElementsSaturatesInsteadOfOverflowing) {
  EXPECT_EQ(Shape({3037000500, 3037000500}).NumElements(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Shape({-3037000500, 3037000500}).NumElements(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Shape({4, 0, int64_t{1} << 62}).NumElements(0, 2), 0);
}

}  // namespace
}  // namespace softwire
