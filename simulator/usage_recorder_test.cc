#include "simulator/usage_recorder.h"

#include <gtest/gtest.h>

namespace softwire {
namespace simulator {
namespace {

TEST(CoveredTimeTest, CountsOnlyTheBusyPartOfAWindow) {
  const std::vector<Interval> busy = {{0, 10}, {20, 30}, {40, 50}};
  EXPECT_EQ(CoveredTime(busy, 0, 50), 30);
  EXPECT_EQ(CoveredTime(busy, 5, 25), 10);
  EXPECT_EQ(CoveredTime(busy, 10, 20), 0);
  EXPECT_EQ(CoveredTime(busy, 45, 100), 5);
  EXPECT_EQ(CoveredTime(busy, 30, 30), 0);
  EXPECT_EQ(CoveredTime({}, 0, 100), 0);
}

TEST(MergeIntervalsTest, SortsAndJoinsOverlappingAndTouchingIntervals) {
  const std::vector<Interval> merged =
      MergeIntervals({{20, 30}, {0, 10}, {5, 12}, {12, 15}, {40, 41}});
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].start, 0);
  EXPECT_EQ(merged[0].end, 15);
  EXPECT_EQ(merged[1].start, 20);
  EXPECT_EQ(merged[1].end, 30);
  EXPECT_EQ(merged[2].start, 40);
  EXPECT_EQ(merged[2].end, 41);
}

}  // namespace
}  // namespace simulator
}  // namespace softwire
