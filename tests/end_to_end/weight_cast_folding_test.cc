// fold_weight_casts end to end (docs/PRECISION.md, "The update writes the bf16 copy"): the engine
// trains the example MLP (sgd with momentum) and transformer (adam) under bf16 to the very same
// losses with the fold on and off, bit for bit: the update rounds the same float32 master values
// into the copy that the cast would round the next step (base/bfloat16.h ToBFloat16 both).
// A copy the update failed to write would leave the first step's weights in the products, and
// the losses would part from the second step on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/end_to_end/testing/engine_losses.h"

namespace softwire {
namespace {

constexpr int kSteps = 6;

compiler::CompileOptions Bf16Options(bool fold) {
  compiler::CompileOptions options;
  options.steps = kSteps;
  options.precision = proto::PRECISION_BF16;
  options.fold_weight_casts = fold;
  return options;
}

int CountUpdatesWritingCopies(const proto::Plan& plan) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    count += actor.kind() == proto::ACTOR_KIND_UPDATE && actor.input_register_size() == 3;
  }
  return count;
}

TEST(WeightCastFolding, TheEngineTrainsToTheSameLossesBitForBitWithTheFoldOnAndOff) {
  for (const char* path :
       {"tests/compiler/jobs/mlp.pbtxt", "tests/compiler/jobs/transformer.pbtxt"}) {
    SCOPED_TRACE(path);
    const end_to_end_testing::PlanRun folded =
        end_to_end_testing::CompileAndRun(path, Bf16Options(true));
    const end_to_end_testing::PlanRun unfolded =
        end_to_end_testing::CompileAndRun(path, Bf16Options(false));
    EXPECT_GT(CountUpdatesWritingCopies(folded.plan), 0);
    EXPECT_EQ(CountUpdatesWritingCopies(unfolded.plan), 0);
    const std::vector<double>& expected = unfolded.losses;
    const std::vector<double>& got = folded.losses;
    ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));
    ASSERT_EQ(got.size(), expected.size());
    for (size_t step = 0; step < expected.size(); ++step) {
      EXPECT_EQ(got[step], expected[step]) << "step " << step;
    }
    // The weights move: a fold that froze the copies would still match on step 0 alone.
    EXPECT_NE(expected.front(), expected.back());
  }
}

}  // namespace
}  // namespace softwire
