// Bad input: every tests/compiler/bad_input/NAME.pbtxt is a job with one mistake. Its header
// comments say what compiling it must report:
//   # expect: <text the error message must contain>   (one or more; file:line: op '...': ...)
//   # code: RESOURCE_EXHAUSTED                         (optional; default INVALID_ARGUMENT)
//   # memory_bytes: 4096                               (optional; the cpu's memory budget)
//   # cluster: 2cpu:64KiB                              (optional; a cluster shorthand instead)
// Adding a case is adding a file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
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

using ::testing::HasSubstr;
using ::testing::StartsWith;

const char kBadInputDirectory[] = "tests/compiler/bad_input";

struct Expectation {
  std::vector<std::string> fragments;
  std::string code = "INVALID_ARGUMENT";
  int64_t memory_bytes = 0;
  std::string cluster;
};

Expectation ReadExpectation(const std::string& text) {
  Expectation expectation;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    auto value_of = [&line](const std::string& key) -> std::optional<std::string> {
      if (line.rfind(key, 0) != 0) return std::nullopt;
      return line.substr(key.size());
    };
    if (auto fragment = value_of("# expect: ")) expectation.fragments.push_back(*fragment);
    if (auto code = value_of("# code: ")) expectation.code = *code;
    if (auto memory = value_of("# memory_bytes: ")) expectation.memory_bytes = std::stoll(*memory);
    if (auto cluster = value_of("# cluster: ")) expectation.cluster = *cluster;
  }
  return expectation;
}

std::vector<std::string> BadInputs() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kBadInputDirectory)) {
    if (entry.path().extension() == ".pbtxt") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Parses and compiles `path`; the first error, or OK.
Status ParseAndCompile(const std::string& path, const Expectation& expectation) {
  StatusOr<JobFile> job = ParseJobFile(path);
  if (!job.ok()) return job.status();
  CompileOptions options;
  options.cluster = OneCpuCluster(expectation.memory_bytes);
  if (!expectation.cluster.empty()) {
    SOFTWIRE_ASSIGN_OR_RETURN(options.cluster,
                              placement::ParseClusterShorthand(expectation.cluster, 8));
  }
  return CompileJob(*job, options).status();
}

class BadInput : public ::testing::TestWithParam<std::string> {};

TEST_P(BadInput, FailsWithAMessageNamingWhereAndWhat) {
  const std::string path = std::string(kBadInputDirectory) + "/" + GetParam() + ".pbtxt";
  StatusOr<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  Expectation expectation = ReadExpectation(*text);
  ASSERT_FALSE(expectation.fragments.empty()) << path << " has no '# expect: ' line";

  Status status = ParseAndCompile(path, expectation);
  ASSERT_FALSE(status.ok()) << path << " compiled";
  EXPECT_EQ(StatusCodeName(status.code()), expectation.code) << status;
  for (const std::string& fragment : expectation.fragments) {
    EXPECT_THAT(status.message(), HasSubstr(fragment));
  }
  if (status.code() == StatusCode::kInvalidArgument) {
    EXPECT_THAT(status.message(), StartsWith(path + ":"));
  }
}

INSTANTIATE_TEST_SUITE_P(EveryJobInTheBadInputDirectory, BadInput, ::testing::ValuesIn(BadInputs()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(BadInputs, CoverEveryKindOfMistakeTheCompilerNames) {
  EXPECT_GE(BadInputs().size(), 30u);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
