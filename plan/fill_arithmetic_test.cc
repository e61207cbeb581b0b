// The fill arithmetic matches docs/PROTOCOL.md's formulas, and its two spellings (by periods,
// by firings per fill) agree on every firing of a range of periods.
#include "plan/fill_arithmetic.h"

#include <gtest/gtest.h>

namespace softwire {
namespace plan {
namespace {

TEST(FillArithmeticTest, AnAccumulatorOfFourPiecesFillsOnceEveryFourFirings) {
  EXPECT_EQ(FillOf(3, 1, 4), 0);
  EXPECT_EQ(FillOf(4, 1, 4), 1);
  EXPECT_TRUE(BeginsFill(4, 1, 4));
  EXPECT_FALSE(BeginsFill(5, 1, 4));
  EXPECT_TRUE(EndsFill(7, 1, 4));
  EXPECT_FALSE(EndsFill(6, 1, 4));
  EXPECT_EQ(CompletingFiring(1, 1, 4), 7);  // An accumulator completes fill 1 at firing 7.
  EXPECT_EQ(CompletingFiring(1, 4, 4), 1);  // A per-step producer completes it at firing 1.
  EXPECT_EQ(FirstReadingFiring(2, 1, 4), 8);
  EXPECT_EQ(ReleasingFiring(2, 1, 4), 11);
  EXPECT_TRUE(StillNeedsFill(11, 2, 1, 4));
  EXPECT_FALSE(StillNeedsFill(12, 2, 1, 4));
  EXPECT_EQ(FillCount(12, 4), 3);
}

TEST(FillArithmeticTest, FillsGoRoundRobinAndWaitForThePreviousOccupantOfTheirSlot) {
  EXPECT_EQ(SlotOf(0, 3), 0);
  EXPECT_EQ(SlotOf(4, 3), 1);
  EXPECT_EQ(PreviousFillInSlot(4, 3), 1);
  EXPECT_TRUE(SlotFreeFor(2, /*freed=*/0, /*slots=*/3));
  EXPECT_FALSE(SlotFreeFor(3, /*freed=*/0, /*slots=*/3));
  EXPECT_TRUE(SlotFreeFor(3, /*freed=*/1, /*slots=*/3));
}

TEST(FillArithmeticTest, ThePeriodAndRatioSpellingsAgreeOnEveryFiring) {
  for (int64_t actor_period : {1, 2, 3}) {
    for (int64_t multiple : {1, 2, 5}) {
      const int64_t register_period = actor_period * multiple;
      const int64_t ratio = FiringsPerFill(actor_period, register_period);
      ASSERT_EQ(ratio, multiple);
      for (int64_t firing = 0; firing < 30; ++firing) {
        EXPECT_EQ(FillOfFiring(firing, ratio), FillOf(firing, actor_period, register_period));
        EXPECT_EQ(FiringBeginsFill(firing, ratio),
                  BeginsFill(firing, actor_period, register_period));
        EXPECT_EQ(FiringEndsFill(firing, ratio), EndsFill(firing, actor_period, register_period));
        const int64_t fill = FillOf(firing, actor_period, register_period);
        EXPECT_LE(FirstReadingFiring(fill, actor_period, register_period), firing);
        EXPECT_GE(ReleasingFiring(fill, actor_period, register_period), firing);
      }
    }
  }
}

}  // namespace
}  // namespace plan
}  // namespace softwire
