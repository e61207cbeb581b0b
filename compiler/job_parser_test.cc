// ParseJobText / ParseJobFile: syntax errors with file:line:column, and the lines of blocks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/compiler.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

TEST(JobParser, RecordsTheLineOfEveryBlock) {
  const char* text =
      "name: \"j\"\n"
      "source { name: \"data\" }\n"
      "\n"
      "variable { name: \"w\" }\n"
      "op {\n"
      "  name: \"fc\"\n"
      "}\n"
      "op { name: \"fc\" }\n"
      "metric: \"m\"\n"
      "train { loss: \"l\" }\n";
  StatusOr<JobFile> job = ParseJobText(text, "j.pbtxt", "/data/jobs");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->path, "j.pbtxt");
  EXPECT_EQ(job->directory, "/data/jobs");
  EXPECT_EQ(job->source_lines.at("data"), 2);
  EXPECT_EQ(job->variable_lines.at("w"), 4);
  EXPECT_EQ(job->op_lines.at("fc"), 5);  // The first of the two.
  EXPECT_EQ(job->op_line_at, (std::vector<int>{5, 8}));
  EXPECT_EQ(job->metric_line_at, (std::vector<int>{9}));
  EXPECT_EQ(job->train_line, 10);
}

TEST(JobParser, ReportsSyntaxErrorsWithFileLineAndColumn) {
  StatusOr<JobFile> job = ParseJobText("name: \"j\"\nop { name: \"x\" \n", "bad.pbtxt", ".");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(job.status().message(), HasSubstr("bad.pbtxt:3:1: "));
}

TEST(JobParser, ReportsUnknownFieldsWithTheirPosition) {
  StatusOr<JobFile> job =
      ParseJobText("name: \"j\"\nop {\n  name: \"x\"\n  kind: \"matmul\"\n}\n", "bad.pbtxt", ".");
  ASSERT_FALSE(job.ok());
  EXPECT_THAT(job.status().message(), HasSubstr("bad.pbtxt:4:7: "));
  EXPECT_THAT(job.status().message(), HasSubstr("no field named \"kind\""));
}

TEST(JobParser, SaysWhichFileItCannotRead) {
  StatusOr<JobFile> job = ParseJobFile("/nonexistent/job.pbtxt");
  ASSERT_FALSE(job.ok());
  EXPECT_THAT(job.status().message(), HasSubstr("/nonexistent/job.pbtxt"));
}

TEST(JobParser, ResolvesTheDirectoryOfAFileToAnAbsolutePath) {
  StatusOr<JobFile> job = ParseJobFile("tests/compiler/jobs/mlp.pbtxt");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->directory.front(), '/');
  EXPECT_THAT(job->directory, ::testing::EndsWith("tests/compiler/jobs"));
  EXPECT_EQ(job->op_lines.at("fc1"), 50);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
