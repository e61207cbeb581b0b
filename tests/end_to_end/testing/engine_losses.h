// Helpers for the end-to-end tests that compile a job twice, in two ways, run both plans on the
// engine and compare their per-step losses (fusion_matches_unfused_test,
// weight_cast_folding_test, bf16_training_test, ordering_edges_match_test).
//
//   compiler::CompileOptions options;
//   options.steps = 10;
//   const PlanRun fused = CompileAndRun("tests/compiler/jobs/mlp.pbtxt", options);
//   options.fuse_elementwise = false;
//   const PlanRun unfused = CompileAndRun("tests/compiler/jobs/mlp.pbtxt", options);
//   const LossDifferences d = CompareLosses("mlp", fused.losses, unfused.losses);
//   EXPECT_LE(d.worst, 1e-3);
//
// Failures (a job that does not parse or compile, a run that fails, losses of different lengths
// or not finite) fail the calling test with gtest's EXPECT_*, and the helper goes on with what
// it has (an empty plan, no losses), so the caller's own size checks stop it.
#ifndef SOFTWIRE_TESTS_END_TO_END_TESTING_ENGINE_LOSSES_H_
#define SOFTWIRE_TESTS_END_TO_END_TESTING_ENGINE_LOSSES_H_

#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace end_to_end_testing {

// The job file at `path` (relative to the working directory, the repository root for these
// tests) compiled with `options`; an empty plan after a failed EXPECT when it does not.
proto::Plan CompileJobFile(const std::string& path, const compiler::CompileOptions& options);

// The per-step losses of the engine (CAF runtime, cpu kernels) running `plan`, default run
// options; none after a failed EXPECT when the run fails.
std::vector<double> EngineLosses(const proto::Plan& plan);

// A compiled plan and the engine's losses on it.
struct PlanRun {
  proto::Plan plan;
  std::vector<double> losses;
};

// CompileJobFile, then EngineLosses.
PlanRun CompileAndRun(const std::string& path, const compiler::CompileOptions& options);

// The largest |a - b| / |b| over the steps; fails the test (EXPECT) on a length mismatch or a
// non-finite value in `a`.
double WorstRelativeDifference(const std::vector<double>& a, const std::vector<double>& b);

// `value` as the test property `name` ("%.3e"), for the XML report.
void RecordFigure(const std::string& name, double value);

// How far `got` is from `expected`: on the first step and the worst over the steps, both
// relative to `expected`.
struct LossDifferences {
  double first = 0;
  double worst = 0;
};

// The differences of two equally long, non-empty loss lists (checked with ASSERT-like
// EXPECTs: zeros come back when they are not), recorded as LABEL_first_step_relative_difference
// and LABEL_worst_relative_difference.
LossDifferences CompareLosses(const std::string& label, const std::vector<double>& got,
                              const std::vector<double>& expected);

}  // namespace end_to_end_testing
}  // namespace softwire

#endif  // SOFTWIRE_TESTS_END_TO_END_TESTING_ENGINE_LOSSES_H_
