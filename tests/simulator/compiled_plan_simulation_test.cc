// Compiled plans through the simulator: tests/compiler/jobs/mlp.pbtxt under pp=4, dp=2 on
// eight sim devices (one node, and two nodes of four).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "simulator/simulation_trace.h"
#include "simulator/simulator.h"
#include "trace/chrome_trace.h"
#include "trace/chrome_trace_check.h"
#include "trace/trace_model.h"
#include "trace/trace_summary.h"

namespace softwire {
namespace {

using simulator::SimulationOptions;
using simulator::SimulationResult;

proto::Plan CompileMlp(const std::string& cluster, int64_t steps) {
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile("tests/compiler/jobs/mlp.pbtxt");
  CHECK(job.ok()) << job.status();
  compiler::CompileOptions options;
  StatusOr<proto::Cluster> parsed = placement::ParseClusterShorthand(cluster, 2);
  CHECK(parsed.ok()) << parsed.status();
  options.cluster = *parsed;
  options.steps = steps;
  options.micro_batches_per_step = 8;
  options.parallel.set_pipeline_stages(4);
  options.parallel.set_data_parallel(2);
  StatusOr<proto::Plan> plan = compiler::CompileJob(*job, options);
  CHECK(plan.ok()) << plan.status();
  return *plan;
}

struct TracedRun {
  SimulationResult result;
  trace::TraceLog log;
};

TracedRun SimulateTraced(const proto::Plan& plan) {
  StatusOr<std::unique_ptr<simulator::SimulationTrace>> trace =
      simulator::SimulationTrace::Create(1 << 20);
  CHECK(trace.ok()) << trace.status();
  SimulationOptions options;
  options.trace_writer = (*trace)->writer();
  StatusOr<SimulationResult> result = simulator::Simulate(plan, options);
  CHECK(result.ok()) << result.status();
  return TracedRun{*result, (*trace)->TakeLog(plan, 0, options.trace_steps, "ok")};
}

class CompiledPlanSimulationTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CompiledPlanSimulationTest, ATrainingPlanRunsToTheEndWithEveryActorFiringItsFirings) {
  const proto::Plan plan = CompileMlp(GetParam(), /*steps=*/4);
  ASSERT_EQ(plan.device_size(), 8);
  const TracedRun run = SimulateTraced(plan);
  std::vector<int64_t> fired(static_cast<size_t>(plan.actor_size()), 0);
  for (const trace::TraceEvent& event : run.log.events) ++fired[static_cast<size_t>(event.actor)];
  int64_t total = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    EXPECT_EQ(fired[static_cast<size_t>(actor.id())], actor.firings()) << actor.name();
    total += actor.firings();
  }
  const SimulationResult& result = run.result;
  EXPECT_EQ(result.firings, total);
  EXPECT_EQ(result.stages, 4);
  ASSERT_EQ(result.step_end_ns.size(), 4u);
  for (size_t s = 1; s < result.step_end_ns.size(); ++s) {
    EXPECT_GT(result.step_end_ns[s], result.step_end_ns[s - 1]);
  }
  EXPECT_GE(result.total_ns, result.step_end_ns.back());
  EXPECT_GT(result.steady_step_ns, 0);
  // Every firing's kernel ran for its estimate, after it launched.
  for (const trace::TraceEvent& event : run.log.events) {
    ASSERT_LE(event.launch, event.start);
    EXPECT_EQ(event.end - event.start,
              simulator::SecondsToSimTime(plan.actor(event.actor).estimated_seconds()));
  }
  // Memory in use never exceeds what the plan allocates for registers.
  for (const simulator::DeviceMemory& memory : result.memory) {
    EXPECT_GT(memory.register_high_water, 0);
    EXPECT_LE(memory.register_high_water, memory.planned_register_bytes);
    EXPECT_LE(memory.high_water(), memory.planned_bytes);
  }
  EXPECT_GE(result.bubble_measured, 0);
  EXPECT_LT(result.bubble_measured, 1);
}

TEST_P(CompiledPlanSimulationTest, TwoSimulationsOfATrainingPlanAreIdentical) {
  const proto::Plan plan = CompileMlp(GetParam(), /*steps=*/3);
  const TracedRun first = SimulateTraced(plan);
  const TracedRun second = SimulateTraced(plan);
  EXPECT_EQ(first.result.total_ns, second.result.total_ns);
  EXPECT_EQ(first.result.step_end_ns, second.result.step_end_ns);
  EXPECT_EQ(first.result.events, second.result.events);
  EXPECT_EQ(first.result.bubble_measured, second.result.bubble_measured);
  ASSERT_EQ(first.log.events.size(), second.log.events.size());
  for (size_t i = 0; i < first.log.events.size(); ++i) {
    const trace::TraceEvent& a = first.log.events[i];
    const trace::TraceEvent& b = second.log.events[i];
    ASSERT_EQ(std::make_tuple(a.actor, a.index, a.launch, a.start, a.end, a.cause),
              std::make_tuple(b.actor, b.index, b.launch, b.start, b.end, b.cause))
        << "event " << i;
  }
}

TEST_P(CompiledPlanSimulationTest, TheTraceSummaryOfASimulatedRunAgreesWithTheSimulator) {
  const proto::Plan plan = CompileMlp(GetParam(), /*steps=*/3);
  const TracedRun run = SimulateTraced(plan);
  StatusOr<trace::TraceModel> model = trace::BuildTraceModel(run.log);
  ASSERT_TRUE(model.ok()) << model.status();
  const trace::TraceSummary summary = trace::Summarize(*model);
  EXPECT_EQ(summary.stages, run.result.stages);
  EXPECT_DOUBLE_EQ(summary.bubble_formula, run.result.bubble_formula);
  EXPECT_NEAR(summary.bubble_measured, run.result.bubble_measured, 1e-9);
  EXPECT_NEAR(summary.span_seconds, simulator::SimTimeToSeconds(run.result.step_end_ns.back()),
              1e-6);
}

TEST_P(CompiledPlanSimulationTest, TheChromeTraceOfASimulatedRunKeepsTheFileRules) {
  const proto::Plan plan = CompileMlp(GetParam(), /*steps=*/2);
  const TracedRun run = SimulateTraced(plan);
  StatusOr<trace::TraceModel> model = trace::BuildTraceModel(run.log);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->adjusted_slices, 0);  // A queue never runs two kernels at once.
  StatusOr<trace::ChromeTraceCounts> counts =
      trace::CheckChromeTrace(trace::ExportChromeTrace(*model));
  ASSERT_TRUE(counts.ok()) << counts.status();
  EXPECT_EQ(counts->complete_events - static_cast<int64_t>(model->waits.size()),
            run.result.firings);
}

INSTANTIATE_TEST_SUITE_P(OneAndTwoNodes, CompiledPlanSimulationTest,
                         ::testing::Values("8sim", "2x4sim"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "8sim" ? std::string("OneNode")
                                                       : std::string("TwoNodes");
                         });

}  // namespace
}  // namespace softwire
