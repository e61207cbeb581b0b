// The global sbp search never estimates worse than the greedy choice (SbpProblem::Evaluate:
// compute + every boxing per piece) on the repository's jobs, under tensor parallelism alone and
// with data and pipeline parallelism, and the plans it chooses compile whole.
#include <gtest/gtest.h>

#include <cstdio>

#include "base/file.h"
#include "compiler/testing/compiler_test_util.h"
#include "compiler/testing/parallel_settings.h"

namespace softwire {
namespace compiler {
namespace {

// Tensor parallelism alone and with each other degree (kParallelSettings has tp only in tp2 and
// dp2_tp2).
const ParallelSetting kSettings[] = {
    {"tp2", 1, 2, 1},
    {"tp4", 1, 4, 1},
    {"dp2_tp2", 2, 2, 1},
    {"tp2_pp2", 1, 2, 2},
};

const char* const kJobs[] = {
    "tests/compiler/jobs/mlp.pbtxt", "tests/compiler/jobs/transformer.pbtxt",
    "tests/compiler/jobs/cnn.pbtxt", "tests/compiler/jobs/resnet_tiny.pbtxt",
    "demos/charlm/charlm.pbtxt",     "demos/digits/digits.pbtxt",
    "demos/fashion/fashion.pbtxt",   "bench/training/mlp.pbtxt",
};

CompileOptions OptionsFor(const ParallelSetting& setting) {
  return ParallelOptions(setting, setting.Devices());
}

TEST(SbpSearchJobsTest, GlobalNeverEstimatesWorseThanGreedy) {
  int compared = 0;
  for (const char* job : kJobs) {
    StatusOr<std::string> text = ReadFile(job);
    ASSERT_TRUE(text.ok()) << text.status();
    for (const ParallelSetting& setting : kSettings) {
      StagedCompilation staged(*text, OptionsFor(setting));
      Status status = staged.RunThrough("choose_sbp");
      if (!status.ok()) {
        // A split the job's shapes do not allow (e.g. a pipeline deeper than its ops) is not
        // the search's business; every other failure is.
        EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << job << " " << setting.name;
        std::printf("%-40s %-8s not compiled: %s\n", job, setting.name, status.message().c_str());
        continue;
      }
      const SbpSearchReport& report = staged.compilation().sbp_search;
      EXPECT_EQ(report.method, "global");
      EXPECT_GT(report.greedy_seconds, 0) << job << " " << setting.name;
      EXPECT_LE(report.chosen_seconds, report.greedy_seconds * (1 + 1e-12))
          << job << " " << setting.name;
      std::printf("%-40s %-8s greedy %10.4g ms, global %10.4g ms per piece, %d ops changed\n", job,
                  setting.name, report.greedy_seconds * 1e3, report.chosen_seconds * 1e3,
                  report.ops_changed);
      ++compared;
    }
  }
  // Most jobs split under every setting; a suite that compiled almost none would prove nothing.
  EXPECT_GE(compared, 24);
}

TEST(SbpSearchJobsTest, ChosenPlansCompileWhole) {
  for (const char* job : {"tests/compiler/jobs/transformer.pbtxt", "demos/charlm/charlm.pbtxt"}) {
    StatusOr<std::string> text = ReadFile(job);
    ASSERT_TRUE(text.ok()) << text.status();
    StatusOr<proto::Plan> plan = CompileJobText(*text, OptionsFor({"tp2_pp2", 1, 2, 2}));
    EXPECT_TRUE(plan.ok()) << job << ": " << plan.status();
  }
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
