// Golden plans: every tests/compiler/golden/NAME.pbtxt compiles to exactly NAME.plan.txt
// (DumpPlan) and NAME.summary.txt (SummarizePlan). The cluster is a fixed one-cpu cluster, or
// the shorthand of a "# cluster: 4cpu" header line (with 8 machine cores, so the files do not
// depend on the machine); a job's `parallel` section sets dp, tp and pp. A plan names no
// directory of the machine (portable plans), so the files hold the dump exactly as it is.
//
// After an intended change, rewrite the files and review the diff:
//   SOFTWIRE_UPDATE_GOLDEN=1 build/tests/compiler/compiler_golden_test
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "base/file.h"
#include "compiler/compiler.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"

namespace softwire {
namespace compiler {
namespace {

const char kGoldenDirectory[] = "tests/compiler/golden";

std::vector<std::string> GoldenJobs() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kGoldenDirectory)) {
    std::string file = entry.path().filename().string();
    const std::string suffix = ".pbtxt";
    if (file.size() > suffix.size() && file.rfind(suffix) == file.size() - suffix.size()) {
      names.push_back(file.substr(0, file.size() - suffix.size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool UpdatingGoldens() {
  const char* update = std::getenv("SOFTWIRE_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

// "line 12:\n  golden: ...\n  actual: ..." for the first line that differs; "" when equal.
std::string FirstDifference(const std::string& expected, const std::string& actual) {
  std::istringstream expected_lines(expected);
  std::istringstream actual_lines(actual);
  std::string want;
  std::string got;
  for (int line = 1;; ++line) {
    bool has_want = static_cast<bool>(std::getline(expected_lines, want));
    bool has_got = static_cast<bool>(std::getline(actual_lines, got));
    if (!has_want && !has_got) return "";
    if (has_want != has_got || want != got) {
      return "line " + std::to_string(line) + ":\n  golden: " + (has_want ? want : "<end>") +
             "\n  actual: " + (has_got ? got : "<end>");
    }
  }
}

// Compares `actual` with the golden file at `path`, or rewrites it when updating.
void ExpectMatchesGolden(const std::string& path, const std::string& actual) {
  if (UpdatingGoldens()) {
    ASSERT_TRUE(WriteFileAtomically(path, actual).ok()) << path;
    return;
  }
  StatusOr<std::string> expected = ReadFile(path);
  ASSERT_TRUE(expected.ok()) << path << " is missing; run with SOFTWIRE_UPDATE_GOLDEN=1 to "
                             << "write it, then review it";
  std::string difference = FirstDifference(*expected, actual);
  EXPECT_EQ(difference, "") << path << " differs; if the change is intended, rerun with "
                            << "SOFTWIRE_UPDATE_GOLDEN=1 and review the diff";
}

class GoldenPlan : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenPlan, MatchesItsGoldenDumpAndSummary) {
  const std::string base = std::string(kGoldenDirectory) + "/" + GetParam();
  StatusOr<JobFile> job = ParseJobFile(base + ".pbtxt");
  ASSERT_TRUE(job.ok()) << job.status();
  StatusOr<std::string> text = ReadFile(base + ".pbtxt");
  ASSERT_TRUE(text.ok()) << text.status();
  CompileOptions options;
  options.cluster = ClusterNamedIn(*text);
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ExpectMatchesGolden(base + ".plan.txt", DumpPlan(*plan));
  ExpectMatchesGolden(base + ".summary.txt", SummarizePlan(*plan));
}

INSTANTIATE_TEST_SUITE_P(EveryJobInTheGoldenDirectory, GoldenPlan,
                         ::testing::ValuesIn(GoldenJobs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(GoldenPlans, CoverAtLeastFourJobs) {
  EXPECT_GE(GoldenJobs().size(), 4u);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
