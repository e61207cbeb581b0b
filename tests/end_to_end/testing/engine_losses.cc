#include "tests/end_to_end/testing/engine_losses.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "runtime/host/job_runner.h"

namespace softwire {
namespace end_to_end_testing {

proto::Plan CompileJobFile(const std::string& path, const compiler::CompileOptions& options) {
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(path);
  EXPECT_TRUE(job.ok()) << job.status();
  if (!job.ok()) return proto::Plan();
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

PlanRun CompileAndRun(const std::string& path, const compiler::CompileOptions& options) {
  PlanRun run;
  run.plan = CompileJobFile(path, options);
  run.losses = EngineLosses(run.plan);
  return run;
}

double WorstRelativeDifference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t step = 0; step < std::min(a.size(), b.size()); ++step) {
    EXPECT_TRUE(std::isfinite(a[step])) << "step " << step;
    worst = std::max(worst, std::abs(a[step] - b[step]) / std::abs(b[step]));
  }
  return worst;
}

void RecordFigure(const std::string& name, double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3e", value);
  ::testing::Test::RecordProperty(name, text);
}

LossDifferences CompareLosses(const std::string& label, const std::vector<double>& got,
                              const std::vector<double>& expected) {
  LossDifferences differences;
  EXPECT_EQ(got.size(), expected.size()) << label;
  EXPECT_FALSE(got.empty()) << label;
  if (got.empty() || got.size() != expected.size()) return differences;
  differences.first = std::abs(got[0] - expected[0]) / std::abs(expected[0]);
  differences.worst = WorstRelativeDifference(got, expected);
  RecordFigure(label + "_first_step_relative_difference", differences.first);
  RecordFigure(label + "_worst_relative_difference", differences.worst);
  return differences;
}

}  // namespace end_to_end_testing
}  // namespace softwire
