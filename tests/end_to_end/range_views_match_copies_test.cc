// Range views end to end (docs/PROTOCOL.md, "Range views"): under data parallelism the ring
// all-reduce's sends, copies and adds read each chunk of the gradient as a byte range of its
// register instead of a `flat_split`'s copy, and the engine trains to the very losses of the plan
// that keeps the split (`--no-views`): each kernel reads the same values from another address,
// so the losses are equal bit for bit. On one node (the ring's copies read ranges) and on two
// (its sends do), and the folded plans do hold range reads and no ring split.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "plan/input_ranges.h"
#include "tests/end_to_end/testing/engine_losses.h"

namespace softwire {
namespace {

using end_to_end_testing::EngineLosses;

constexpr int kSteps = 4;
constexpr char kJob[] = "bench/training/mlp.pbtxt";

proto::Plan Compile(const std::string& cluster, bool views) {
  compiler::CompileOptions options;
  options.steps = kSteps;
  options.fold_views = views;
  StatusOr<proto::Cluster> parsed = placement::ParseClusterShorthand(cluster, 2);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (parsed.ok()) options.cluster = *parsed;
  options.parallel.set_data_parallel(2);
  return end_to_end_testing::CompileJobFile(kJob, options);
}

// Actors of `kind` that read a range of a register.
int RangeReads(const proto::Plan& plan, proto::ActorKind kind) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.kind() != kind) continue;
    for (int k = 0; k < actor.kernel().input_size(); ++k) {
      count += plan::IsRangeInput(plan, actor, k);
    }
  }
  return count;
}

// The ring's flat_splits ("<name>.all_reduce[...].split@<device>").
int RingSplits(const proto::Plan& plan) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    count += actor.kernel().op_type() == "flat_split" &&
             actor.name().find(".split@") != std::string::npos;
  }
  return count;
}

void ExpectRangesTrainAsCopies(const std::string& cluster, proto::ActorKind transfer) {
  const proto::Plan ranges = Compile(cluster, true);
  const proto::Plan copies = Compile(cluster, false);
  EXPECT_GT(RangeReads(ranges, transfer), 0) << cluster;
  EXPECT_GT(RangeReads(ranges, proto::ACTOR_KIND_BOXING), 0) << cluster;  // The adds.
  EXPECT_EQ(RingSplits(ranges), 0) << cluster;
  EXPECT_EQ(RangeReads(copies, transfer) + RangeReads(copies, proto::ACTOR_KIND_BOXING), 0);
  EXPECT_GT(RingSplits(copies), 0) << cluster;
  const std::vector<double> with_ranges = EngineLosses(ranges);
  const std::vector<double> with_copies = EngineLosses(copies);
  ASSERT_EQ(with_ranges.size(), static_cast<size_t>(kSteps)) << cluster;
  EXPECT_EQ(with_ranges, with_copies) << cluster;  // Bit for bit.
}

TEST(RangeViews, TheRingsCopiesReadRangesAndTrainToTheSameLossesBitForBit) {
  ExpectRangesTrainAsCopies("2cpu", proto::ACTOR_KIND_COPY);
}

TEST(RangeViews, TheRingsSendsReadRangesAndTrainToTheSameLossesBitForBit) {
  ExpectRangesTrainAsCopies("2x1cpu", proto::ACTOR_KIND_SEND);
}

}  // namespace
}  // namespace softwire
