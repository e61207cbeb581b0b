// Ordering edges end to end (docs/PROTOCOL.md, "Ordering inputs"): the engine running a plan
// whose backward ops wait for the weight-gradient products (order_weight_gradients) trains to
// the very losses of the engine running the plan without them (`--no-ordering-edges`): no kernel
// sees an ordering input and every kernel computes what it did, so the losses are equal bit for
// bit, on the MLP bench job and the example transformer (charlm's shape, small), and the ordered
// plans do hold ordering inputs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "plan/ordering_inputs.h"
#include "tests/end_to_end/testing/engine_losses.h"

namespace softwire {
namespace {

using end_to_end_testing::EngineLosses;

constexpr int kSteps = 6;

proto::Plan Compile(const std::string& path, bool ordering_edges) {
  compiler::CompileOptions options;
  options.steps = kSteps;
  options.ordering_edges = ordering_edges;
  return end_to_end_testing::CompileJobFile(path, options);
}

int OrderingInputs(const proto::Plan& plan) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) count += plan::OrderingInputCount(actor);
  return count;
}

TEST(OrderingEdges, TheEngineTrainsToTheSameLossesBitForBit) {
  for (const char* path : {"bench/training/mlp.pbtxt", "tests/compiler/jobs/transformer.pbtxt"}) {
    const proto::Plan ordered = Compile(path, true);
    const proto::Plan unordered = Compile(path, false);
    EXPECT_GT(OrderingInputs(ordered), 0) << path;
    EXPECT_EQ(OrderingInputs(unordered), 0) << path;
    const std::vector<double> expected = EngineLosses(unordered);
    const std::vector<double> got = EngineLosses(ordered);
    ASSERT_EQ(got.size(), static_cast<size_t>(kSteps)) << path;
    EXPECT_EQ(got, expected) << path;
    EXPECT_NE(got.front(), got.back()) << path << ": training moved nothing";
  }
}

}  // namespace
}  // namespace softwire
