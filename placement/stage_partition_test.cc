// Pipeline stage partitioning by dynamic programming.
#include "placement/stage_partition.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace softwire {
namespace placement {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

StagePartitionInput Input(std::vector<double> seconds, int stages) {
  StagePartitionInput input;
  input.cut_seconds.assign(seconds.size() + 1, 0);
  input.pinned.assign(seconds.size(), -1);
  input.op_seconds = std::move(seconds);
  input.stages = stages;
  return input;
}

TEST(PartitionStages, BalancesKnownCostsToTheSmallestBottleneck) {
  StatusOr<StagePartition> partition = PartitionStages(Input({4, 1, 1, 1, 1, 4}, 2));
  ASSERT_TRUE(partition.ok()) << partition.status();
  EXPECT_THAT(partition->stage_of, ElementsAre(0, 0, 0, 1, 1, 1));
  EXPECT_DOUBLE_EQ(partition->bottleneck_seconds, 6);
  EXPECT_THAT(partition->stage_seconds, ElementsAre(6, 6));
}

TEST(PartitionStages, SplitsFourStagesEvenly) {
  StatusOr<StagePartition> partition = PartitionStages(Input({1, 1, 1, 1, 1, 1, 1, 1}, 4));
  ASSERT_TRUE(partition.ok());
  EXPECT_THAT(partition->stage_of, ElementsAre(0, 0, 1, 1, 2, 2, 3, 3));
  EXPECT_DOUBLE_EQ(partition->bottleneck_seconds, 2);
}

TEST(PartitionStages, SharesTheRestEvenlyWhenOneOpSetsTheBottleneck) {
  // The first op alone is the bottleneck (10); the min-max answer would accept (10, 3, 1) or
  // (10, 1, 3). The most even one under it splits the rest 2 and 2.
  StatusOr<StagePartition> partition = PartitionStages(Input({10, 1, 1, 1, 1}, 3));
  ASSERT_TRUE(partition.ok()) << partition.status();
  EXPECT_DOUBLE_EQ(partition->bottleneck_seconds, 10);
  EXPECT_THAT(partition->stage_of, ElementsAre(0, 1, 1, 2, 2));
  EXPECT_THAT(partition->stage_seconds, ElementsAre(10, 2, 2));
}

TEST(PartitionStages, BalancingNeverRaisesTheBottleneckWithCuts) {
  // Cuts cost 1.5 everywhere but in front of the last op (0.1): the bottleneck is the first
  // stage's 3 ops = 3; balancing must keep every stage (work + incoming cut) within it.
  StagePartitionInput input = Input({1, 1, 1, 1, 1, 0.5}, 3);
  input.cut_seconds = {0, 1.5, 1.5, 1.5, 1.5, 0.1, 0};
  StatusOr<StagePartition> partition = PartitionStages(input);
  ASSERT_TRUE(partition.ok()) << partition.status();
  for (double stage : partition->stage_seconds) {
    EXPECT_LE(stage, partition->bottleneck_seconds + 1e-12);
  }
  EXPECT_DOUBLE_EQ(partition->bottleneck_seconds, 3);
}

TEST(PartitionStages, AvoidsCuttingWhereTheTransferIsExpensive) {
  StagePartitionInput input = Input({2, 2, 2, 2}, 2);
  input.cut_seconds = {0, 0.1, 5, 0.1, 0};  // Cutting in the middle costs 5 s.
  StatusOr<StagePartition> partition = PartitionStages(input);
  ASSERT_TRUE(partition.ok());
  EXPECT_THAT(partition->stage_of, ElementsAre(0, 0, 0, 1));
  EXPECT_DOUBLE_EQ(partition->bottleneck_seconds, 6);
}

TEST(PartitionStages, KeepsPinnedPositionsOnTheirStages) {
  StagePartitionInput input = Input({1, 1, 1, 1, 1, 1}, 3);
  input.pinned = {-1, 2, -1, -1, -1, -1};
  StatusOr<StagePartition> partition = PartitionStages(input);
  ASSERT_TRUE(partition.ok()) << partition.status();
  // Position 1 on stage 2 forces stage 1 (or 0) to be short: 0 | (empty) | 1..5 is the only
  // non-decreasing choice with position 0 first.
  EXPECT_EQ(partition->stage_of[1], 2);
  EXPECT_EQ(partition->stage_of[0], 0);
  for (size_t i = 2; i < 6; ++i) EXPECT_EQ(partition->stage_of[i], 2);
}

TEST(PartitionStages, RejectsPinsThatRunBackwards) {
  StagePartitionInput input = Input({1, 1, 1}, 2);
  input.pinned = {1, 0, -1};
  EXPECT_THAT(PartitionStages(input).status().message(),
              HasSubstr("position 1 is pinned to stage 0 after a position pinned to stage 1"));
  input.pinned = {-1, 2, -1};
  EXPECT_THAT(PartitionStages(input).status().message(), HasSubstr("but there are 2 stages"));
}

TEST(PartitionStages, LeavesStagesEmptyOnlyWhenThereAreMoreStagesThanOps) {
  StatusOr<StagePartition> partition = PartitionStages(Input({3, 5}, 4));
  ASSERT_TRUE(partition.ok());
  EXPECT_DOUBLE_EQ(partition->bottleneck_seconds, 5);
  EXPECT_LT(partition->stage_of[0], partition->stage_of[1]);
}

TEST(PartitionStages, PartitionsTenThousandOpsOnSixteenStagesQuickly) {
  std::vector<double> seconds(10000);
  for (size_t i = 0; i < seconds.size(); ++i) seconds[i] = 1 + static_cast<double>(i % 7);
  StatusOr<StagePartition> partition = PartitionStages(Input(seconds, 16));
  ASSERT_TRUE(partition.ok());
  EXPECT_EQ(partition->stage_of.back(), 15);
  EXPECT_LT(partition->bottleneck_seconds, 40000.0 / 16 * 1.01);
}

}  // namespace
}  // namespace placement
}  // namespace softwire
