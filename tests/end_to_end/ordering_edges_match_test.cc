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
#include "runtime/host/job_runner.h"

namespace softwire {
namespace {

constexpr int kSteps = 6;

proto::Plan Compile(const std::string& path, bool ordering_edges) {
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(path);
  EXPECT_TRUE(job.ok()) << job.status();
  compiler::CompileOptions options;
  options.steps = kSteps;
  options.ordering_edges = ordering_edges;
  StatusOr<proto::Plan> plan = compiler::CompileJob(*job, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : proto::Plan();
}

std::vector<double> EngineLosses(const proto::Plan& plan) {
  StatusOr<runtime::RunResult> engine = runtime::RunPlan(plan, runtime::RunOptions());
  EXPECT_TRUE(engine.ok()) << engine.status();
  std::vector<double> losses;
  if (engine.ok()) {
    for (const runtime::StepResult& step : engine->steps) losses.push_back(step.loss);
  }
  return losses;
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
