// A memory budget the compiler meets (compiler/memory_budget.h; docs/PARALLELISM.md, "A memory
// budget the compiler meets"). The MLP on two data-parallel devices, compiled against the fewest
// bytes the budget driver can reach, fits only by sharding its updates (laid out by the global
// sbp search around the sharded weights); the transformer's gelu outputs recomputed in the
// backward pass, which the driver chooses at the least reachable bytes (with the ordering edges
// of order_weight_gradients, a recomputed value dies as backward goes). Both plans pass the
// emitted-plan checker and
// train to the unconstrained plans' losses and weights in the double-precision reference
// interpreter (recompute computes the same values; sharding changes only the order of the
// gradient sums: 1e-9 relative, as parallel_equivalence_test argues). A budget below that fails
// naming the device, the least bytes and the budget; `compile --explain` says which measures were
// chosen and what each saved.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compiler/compiler.h"
#include "compiler/emitted_plan_check.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"
#include "reference/interpreter/reference_interpreter.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

JobFile Job(const std::string& name) {
  StatusOr<JobFile> job = ParseJobFile("tests/compiler/jobs/" + name + ".pbtxt");
  CHECK(job.ok()) << job.status();
  return *job;
}

CompileOptions WithMemoryBudgetOptions(CompileOptions options, int64_t memory_bytes) {
  options.cluster = WithMemoryBudget(options.cluster, memory_bytes);
  return options;
}

// The default (global) sbp search: asked to shard, it lays the dp-2 MLP out around weights
// sharded over dp (compiler/sbp/sbp_problem.cc ShardedOverDataParallel; docs/PARALLELISM.md, "A
// memory budget the compiler meets"). `sbp` picks the greedy choice, whose sharding
// shard_updates does after the fact.
CompileOptions Options(int dp, SbpSearchMethod sbp = SbpSearchMethod::kGlobal) {
  CompileOptions options;
  options.cluster = *placement::ParseClusterShorthand(std::to_string(dp) + "cpu", 8);
  options.parallel.set_data_parallel(dp);
  options.sbp_search = sbp;
  return options;
}

int64_t MostPlannedBytes(const proto::Plan& plan) {
  int64_t bytes = 0;
  for (const proto::PlanDevice& device : plan.device()) {
    bytes = std::max(bytes, device.planned_bytes());
  }
  return bytes;
}

int CountActorsNamedWith(const proto::Plan& plan, const std::string& part) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    count += actor.name().find(part) != std::string::npos;
  }
  return count;
}

int CountSplitVariables(const proto::Plan& plan) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    count += actor.kind() == proto::ACTOR_KIND_VARIABLE && actor.variable().split_axis() >= 0;
  }
  return count;
}

void ExpectSameTraining(const proto::Plan& expected_plan, const proto::Plan& plan,
                        double tolerance) {
  reference::ReferenceOptions three_steps;
  three_steps.steps = 3;
  StatusOr<reference::ReferenceResult> expected =
      reference::RunReferencePlan(expected_plan, three_steps);
  ASSERT_TRUE(expected.ok()) << expected.status();
  StatusOr<reference::ReferenceResult> got = reference::RunReferencePlan(plan, three_steps);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->steps.size(), expected->steps.size());
  for (size_t step = 0; step < expected->steps.size(); ++step) {
    for (const auto& [name, value] : expected->steps[step].outputs) {
      EXPECT_NEAR(got->steps[step].outputs.at(name), value,
                  tolerance * std::max(1.0, std::fabs(value)))
          << name << " at step " << step;
    }
  }
  ASSERT_EQ(got->variables.size(), expected->variables.size());
  for (const auto& [name, tensor] : expected->variables) {
    const std::vector<double>& values = got->variables.at(name).values;
    ASSERT_EQ(values.size(), tensor.values.size()) << name;
    for (size_t e = 0; e < values.size(); ++e) {
      EXPECT_NEAR(values[e], tensor.values[e], tolerance * std::max(1.0, std::fabs(values[e])))
          << name;
    }
  }
  EXPECT_NE(expected->steps.front().loss, expected->steps.back().loss);
}

TEST(MemoryBudget, RecomputedActivationsTrainToTheSameLossesAndTheDriverKeepsThemOnlyIfTheySave) {
  const JobFile job = Job("transformer");
  CompileOptions options = Options(1);
  StatusOr<proto::Plan> roomy = CompileJob(job, options);
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  EXPECT_EQ(CountActorsNamedWith(*roomy, ".recompute"), 0);
  // Forced (`--recompute -1`): both gelu outputs, which gelu_grad does not read (it reads the
  // input), are recomputed from the bias add's output by a fused clone that waits on a gradient.
  options.recompute = -1;
  StatusOr<proto::Plan> recomputed = CompileJob(job, options);
  ASSERT_TRUE(recomputed.ok()) << recomputed.status();
  EXPECT_EQ(CountActorsNamedWith(*recomputed, ".recompute"), 2);
  const proto::ActorDef* clone = FindActor(*recomputed, "h0.gelu.recompute");
  ASSERT_NE(clone, nullptr);
  ASSERT_EQ(clone->kernel().attr_size(), 1);
  EXPECT_EQ(clone->kernel().attr(0).string(), "t0 = gelu(x0); y0 = t0; after x1");
  EXPECT_EQ(recomputed->register_def(clone->input_register(0)).name(), "h0.fc_biased");
  EXPECT_EQ(recomputed->register_def(clone->output_register(0)).name(), "h0.fc_act.recomputed");
  EXPECT_TRUE(CheckEmittedPlan(*recomputed).ok()) << CheckEmittedPlan(*recomputed);
  ExpectSameTraining(*roomy, *recomputed, 1e-12);

  // Forced, they save bytes: the ordering edges run each weight-gradient product before the
  // backward pass goes on, so a recomputed value dies right after its readers
  // (order_weight_gradients; docs/PARALLELISM.md).
  EXPECT_LT(MostPlannedBytes(*recomputed), MostPlannedBytes(*roomy));

  // Under a budget the driver tries them, cheapest first, and keeps them only where they
  // lower the planned bytes: the least reachable plan recomputes, and fits that budget.
  options.recompute = 0;
  const int64_t least = LeastReachableBytes(job, options);
  ASSERT_GT(least, 0);
  options.cluster = WithMemoryBudget(options.cluster, least);
  StatusOr<std::string> explained = ExplainPlacement(job, options);
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_THAT(*explained,
              ::testing::ContainsRegex("recompute: [12] of 2 candidate activations recomputed"));
  EXPECT_THAT(*explained, HasSubstr("sharding: not chosen"));
  StatusOr<proto::Plan> tight = CompileJob(job, options);
  ASSERT_TRUE(tight.ok()) << tight.status();
  EXPECT_LE(MostPlannedBytes(*tight), least);
  EXPECT_GE(CountActorsNamedWith(*tight, ".recompute"), 1);
  ExpectSameTraining(*roomy, *tight, 1e-12);
  options.recompute = -1;
  explained = ExplainPlacement(job, WithMemoryBudgetOptions(options, 1 << 30));
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_THAT(*explained,
              ::testing::ContainsRegex(
                  "recompute: 2 of 2 candidate activations recomputed in the backward "
                  "pass \\(\\+[0-9.]+ us per piece by the cost model: h0.fc_act 32.0 KiB"));
}

TEST(MemoryBudget, TheMlpOnTwoReplicasFitsOnlyBySharding) {
  const JobFile job = Job("mlp");
  CompileOptions options = Options(2);
  StatusOr<proto::Plan> roomy = CompileJob(job, options);
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  const int64_t least = LeastReachableBytes(job, options);
  ASSERT_GT(least, 0);
  EXPECT_LT(least, MostPlannedBytes(*roomy));

  options.cluster = WithMemoryBudget(options.cluster, least);
  StatusOr<proto::Plan> tight = CompileJob(job, options);
  ASSERT_TRUE(tight.ok()) << tight.status();
  EXPECT_LE(MostPlannedBytes(*tight), least);
  EXPECT_EQ(CountSplitVariables(*roomy), 0);
  EXPECT_EQ(CountSplitVariables(*tight), 6 * 2);  // Every weight and bias, on both replicas.
  EXPECT_TRUE(CheckEmittedPlan(*tight).ok()) << CheckEmittedPlan(*tight);

  StatusOr<std::string> explained = ExplainPlacement(job, options);
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_THAT(*explained, HasSubstr("recompute: not chosen (0 candidate activations)"));
  EXPECT_THAT(*explained, ::testing::ContainsRegex(
                              "sharding: the updates, optimizer state and gradients of [0-9]+ "
                              "variables split over dp 2 \\(.*\\), saving [0-9.]+ [KM]iB on "
                              "node0/cpu:0, [0-9.]+ [KM]iB on node0/cpu:1"));

  ExpectSameTraining(*roomy, *tight, 1e-9);
  StatusOr<proto::Plan> one = CompileJob(job, Options(1));
  ASSERT_TRUE(one.ok()) << one.status();
  ExpectSameTraining(*one, *tight, 1e-9);

  // The greedy choice shards after the fact (shard_updates) and fits too, at more bytes than
  // the search laid out around the sharded weights.
  const CompileOptions greedy = Options(2, SbpSearchMethod::kGreedy);
  const int64_t greedy_least = LeastReachableBytes(job, greedy);
  ASSERT_GT(greedy_least, 0);
  EXPECT_LT(least, greedy_least);
  StatusOr<proto::Plan> greedy_tight =
      CompileJob(job, WithMemoryBudgetOptions(greedy, greedy_least));
  ASSERT_TRUE(greedy_tight.ok()) << greedy_tight.status();
  EXPECT_EQ(CountSplitVariables(*greedy_tight), 6 * 2);
  ExpectSameTraining(*one, *greedy_tight, 1e-9);
}

TEST(MemoryBudget, BelowTheLeastReachableBytesFailsNamingTheDeviceTheBytesAndTheBudget) {
  const JobFile job = Job("mlp");
  CompileOptions options = Options(2);
  const int64_t least = LeastReachableBytes(job, options);
  ASSERT_GT(least, 0);
  options.cluster = WithMemoryBudget(options.cluster, least - 64);
  StatusOr<proto::Plan> plan = CompileJob(job, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(plan.status().message(),
              ::testing::ContainsRegex("device 'node0/cpu:[01]': the plan needs at least " +
                                       std::to_string(least) + " bytes"));
  EXPECT_THAT(plan.status().message(),
              HasSubstr("but its memory budget is " + std::to_string(least - 64) + " bytes"));
  EXPECT_THAT(plan.status().message(), HasSubstr("; the fewest bytes came with fewer slots ("));
  EXPECT_THAT(plan.status().message(), HasSubstr("sharding over dp 2 ("));
}

TEST(MemoryBudget, APlanWithinItsBudgetTakesNoMeasureAndSaysSo) {
  const JobFile job = Job("transformer");
  CompileOptions options = Options(1);
  StatusOr<proto::Plan> roomy = CompileJob(job, options);
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  // Twice the planned bytes: even the registers side by side fit, so not a slot is lowered.
  options.cluster = WithMemoryBudget(options.cluster, 2 * MostPlannedBytes(*roomy));
  StatusOr<proto::Plan> same = CompileJob(job, options);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(MostPlannedBytes(*same), MostPlannedBytes(*roomy));
  EXPECT_EQ(CountActorsNamedWith(*same, ".recompute"), 0);
  StatusOr<std::string> explained = ExplainPlacement(job, options);
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_THAT(*explained, HasSubstr("memory budget (1 compilation):"));
  EXPECT_THAT(*explained, HasSubstr("fewer slots: none needed"));
  EXPECT_THAT(*explained, HasSubstr("recompute: not chosen"));
  EXPECT_THAT(*explained, HasSubstr("sharding: not chosen"));
  // Without a budget, --explain has no budget lines.
  StatusOr<std::string> unbudgeted = ExplainPlacement(job, Options(1));
  ASSERT_TRUE(unbudgeted.ok());
  EXPECT_THAT(*unbudgeted, ::testing::Not(HasSubstr("memory budget")));
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
