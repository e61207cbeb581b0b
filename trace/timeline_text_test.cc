// Text widths, cutting names to fit, and grouping labels that would meet.
#include "trace/timeline_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace softwire {
namespace trace {
namespace {

TEST(TimelineTextTest, WidthsFollowTheFontAndBoldIsWider) {
  // DejaVu Sans: a digit is 0.64 em, 'i' 0.28, 'm' 0.98.
  EXPECT_NEAR(TextWidth("0", 10), 6.4, 1e-9);
  EXPECT_LT(TextWidth("iiii", 12), TextWidth("mmmm", 12));
  EXPECT_GT(TextWidth("step 3", 12, /*bold=*/true), TextWidth("step 3", 12));
  EXPECT_EQ(TextWidth("", 12), 0);
  // A two-byte UTF-8 character counts once, as wide as the em.
  EXPECT_NEAR(TextWidth("\xc3\xa9", 10), 10, 1e-9);
}

TEST(TimelineTextTest, BoxesFollowTheAnchorAndOnlyRealOverlapsCount) {
  const TextBox start = BoxOf(100, 50, "abc", 10, TextAnchor::kStart);
  const TextBox end = BoxOf(100, 50, "abc", 10, TextAnchor::kEnd);
  const TextBox middle = BoxOf(100, 50, "abc", 10, TextAnchor::kMiddle);
  EXPECT_DOUBLE_EQ(start.x, 100);
  EXPECT_DOUBLE_EQ(end.x + end.width, 100);
  EXPECT_DOUBLE_EQ(middle.x + middle.width / 2, 100);
  EXPECT_LT(start.y, 50);
  EXPECT_GT(start.y + start.height, 50);
  EXPECT_TRUE(Overlaps(start, middle));
  EXPECT_FALSE(Overlaps(start, end)) << "touching at x = 100 is not overlapping";
  EXPECT_FALSE(Overlaps(start, BoxOf(100, 50 + start.height, "abc", 10, TextAnchor::kStart)));
}

TEST(TimelineTextTest, FitTextCutsAtEitherEndWithinTheWidth) {
  const std::string name = "node12.example.org/cuda:3 q0";
  EXPECT_EQ(FitText(name, 12, 1000), name);
  const std::string front = FitText(name, 12, 100);
  const std::string back = FitText(name, 12, 100, /*keep_end=*/true);
  EXPECT_LE(TextWidth(front, 12), 100);
  EXPECT_LE(TextWidth(back, 12), 100);
  EXPECT_EQ(front.substr(0, 4), "node");
  EXPECT_EQ(front.substr(front.size() - 3), "...");
  EXPECT_EQ(back.substr(0, 3), "...");
  EXPECT_EQ(back.substr(back.size() - 9), "cuda:3 q0");
  EXPECT_EQ(FitText(name, 12, 5), "") << "not even the dots fit";
  // Never half a UTF-8 character.
  const std::string accented = FitText("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 10, 25);
  EXPECT_EQ(accented, "\xc3\xa9...");
}

TEST(TimelineTextTest, LabelsThatWouldMeetAreGroupedAndTheLastEndsInside) {
  auto name = [](size_t first, size_t last) {
    return first == last ? "step " + std::to_string(first)
                         : "steps " + std::to_string(first) + "-" + std::to_string(last);
  };
  // Far apart: one label each.
  std::vector<PlacedLabel> placed = GroupLabels({0, 100, 200}, name, 10, 4, 1000);
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_EQ(placed[1].text, "step 1");
  // 1 and 2 start 5 px after 0: one label "steps 0-2"; 3 is far.
  placed = GroupLabels({0, 5, 10, 300}, name, 10, 4, 1000);
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[0].text, "steps 0-2");
  EXPECT_EQ(placed[1].text, "step 3");
  // The last label would cross the right edge: it is moved left to end there; moved left, a
  // label that then meets the one before joins it.
  placed = GroupLabels({0, 60, 990}, name, 10, 4, 1000);
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_EQ(placed[2].text, "step 2");
  EXPECT_DOUBLE_EQ(placed[2].x + TextWidth("step 2", 10), 1000);
  placed = GroupLabels({0, 980, 995}, name, 10, 4, 1000);
  ASSERT_EQ(placed.size(), 2u);
  EXPECT_EQ(placed[1].text, "steps 1-2");
  placed = GroupLabels({0, 10, 20}, name, 10, 4, 30);
  ASSERT_EQ(placed.size(), 1u);
  EXPECT_EQ(placed[0].text, "steps 0-2");
  // Whatever the positions, the labels never overlap and name every step once.
  std::vector<double> dense;
  for (int i = 0; i < 50; ++i) dense.push_back(i * 7.0);
  placed = GroupLabels(dense, name, 10, 4, 400);
  for (size_t i = 1; i < placed.size(); ++i) {
    EXPECT_GE(placed[i].x, placed[i - 1].x + TextWidth(placed[i - 1].text, 10)) << i;
  }
  EXPECT_EQ(placed.front().text.substr(0, 8), "steps 0-");
  EXPECT_EQ(placed.back().text.substr(placed.back().text.size() - 3), "-49");
}

}  // namespace
}  // namespace trace
}  // namespace softwire
