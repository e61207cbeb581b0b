// Job forms of the web view (job_form.h) into JobSubmissions, and their refusals.
#include "service/web/job_form.h"

#include <gtest/gtest.h>

namespace softwire {
namespace service {
namespace {

TEST(JobFormTest, AFormBecomesASubmission) {
  StatusOr<proto::JobSubmission> submission =
      JobSubmissionFromForm({{"job", "mlp.pbtxt", "name: 'mlp'"},
                             {"data", "data/x.npy", "bytes"},
                             {"steps", "", "12"},
                             {"pp", "", "2"},
                             {"devices", "", "2"},
                             {"trace", "", "1"},
                             {"trace_steps", "", "2:4"},
                             {"idempotency_key", "", "k-1"}});
  ASSERT_TRUE(submission.ok()) << submission.status();
  EXPECT_EQ(submission->job_text(), "name: 'mlp'");
  EXPECT_EQ(submission->file_name(), "mlp.pbtxt");
  ASSERT_EQ(submission->data_file_size(), 1);
  EXPECT_EQ(submission->data_file(0).path(), "data/x.npy");
  EXPECT_EQ(submission->data_file(0).content(), "bytes");
  EXPECT_EQ(submission->settings().steps(), 12);
  EXPECT_EQ(submission->settings().parallel().pipeline_stages(), 2);
  EXPECT_EQ(submission->settings().devices(), 2);
  EXPECT_TRUE(submission->settings().trace());
  EXPECT_EQ(submission->settings().trace_first_step(), 2);
  EXPECT_EQ(submission->settings().trace_end_step(), 4);
  EXPECT_EQ(submission->idempotency_key(), "k-1");
}

TEST(JobFormTest, AnEmptyStepsBoxKeepsTheJobsSteps) {
  StatusOr<proto::JobSubmission> submission =
      JobSubmissionFromForm({{"job", "a.pbtxt", "x"}, {"steps", "", ""}});
  ASSERT_TRUE(submission.ok()) << submission.status();
  EXPECT_FALSE(submission->has_settings());
}

TEST(JobFormTest, BadFormsAreRefusedNamingTheField) {
  auto message = [](const std::vector<FormPart>& parts) {
    StatusOr<proto::JobSubmission> submission = JobSubmissionFromForm(parts);
    EXPECT_FALSE(submission.ok());
    return submission.ok() ? std::string() : submission.status().message();
  };
  EXPECT_NE(message({}).find("'job'"), std::string::npos);
  EXPECT_NE(message({{"job", "a", "x"}, {"job", "b", "y"}}).find("two"), std::string::npos);
  EXPECT_NE(message({{"job", "a", "x"}, {"steps", "", "ten"}}).find("'steps'"), std::string::npos);
  EXPECT_NE(message({{"job", "a", "x"}, {"trace_steps", "", "3"}}).find("trace_steps"),
            std::string::npos);
  EXPECT_NE(message({{"job", "a", "x"}, {"data", "", "y"}}).find("'data'"), std::string::npos);
  EXPECT_NE(message({{"job", "a", "x"}, {"pp", "", "0"}}).find("'pp'"), std::string::npos);
  EXPECT_NE(message({{"job", "a", "x"}, {"colour", "", "red"}}).find("colour"), std::string::npos);
}

}  // namespace
}  // namespace service
}  // namespace softwire
