// A job's data paths: sent files and files under the data root are gathered into its data
// directory; absolute paths, '..' out of the root, symbolic links out of it, files nowhere and
// oversized uploads are refused, naming the source or variable and the path.
#include "service/job_data.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "base/file.h"

namespace softwire {
namespace service {
namespace {

using ::testing::HasSubstr;

class JobDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = ::testing::TempDir() + "/job_data_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(base_);
    root_ = base_ + "/root";
    ASSERT_TRUE(MakeDirectories(root_ + "/sets").ok());
    ASSERT_TRUE(WriteFileAtomically(root_ + "/sets/x.npy", "x").ok());
    ASSERT_TRUE(WriteFileAtomically(base_ + "/secret.npy", "secret").ok());
    std::filesystem::create_symlink(base_ + "/secret.npy", root_ + "/sets/out.npy");
    std::filesystem::create_symlink(root_ + "/sets/x.npy", root_ + "/in.npy");
  }
  void TearDown() override { std::filesystem::remove_all(base_); }

  // A job whose source "train" reads `path` and whose variable "w" starts from `init`.
  static proto::Job JobNaming(const std::string& path, const std::string& init = "") {
    proto::Job job;
    proto::DataSource* source = job.add_source();
    source->set_name("train");
    source->mutable_npy()->add_path(path);
    if (!init.empty()) {
      proto::Variable* variable = job.add_variable();
      variable->set_name("w");
      variable->mutable_initializer()->set_npy_path(init);
    }
    return job;
  }

  std::string base_;
  std::string root_;
};

TEST_F(JobDataTest, SentFilesAndDataRootFilesMeetInTheJobsDataDirectory) {
  proto::JobSubmission submission;
  proto::DataFile* sent = submission.add_data_file();
  sent->set_path("init/w.npy");
  sent->set_content("weights");
  StatusOr<JobData> data =
      CheckJobData(submission, JobNaming("./sets/x.npy", "init/w.npy"), root_, 1 << 20);
  ASSERT_TRUE(data.ok()) << data.status();
  const std::string directory = base_ + "/job/data";
  ASSERT_TRUE(WriteJobData(*data, directory).ok());
  EXPECT_EQ(*ReadFile(directory + "/init/w.npy"), "weights");
  EXPECT_EQ(*ReadFile(directory + "/sets/x.npy"), "x");
  EXPECT_TRUE(std::filesystem::is_symlink(directory + "/sets/x.npy"));
}

TEST_F(JobDataTest, ALinkThatStaysInsideTheDataRootIsFollowed) {
  StatusOr<JobData> data = CheckJobData({}, JobNaming("in.npy"), root_, 1 << 20);
  ASSERT_TRUE(data.ok()) << data.status();
  ASSERT_EQ(data->files.size(), 1u);
  EXPECT_THAT(data->files[0].link_target, HasSubstr("sets/x.npy"));
}

TEST_F(JobDataTest, PathsOutsideTheDataRootAreRefusedNamingTheirUser) {
  const struct {
    proto::Job job;
    std::string expected;
  } cases[] = {
      {JobNaming(base_ + "/secret.npy"),
       "source 'train': data path '" + base_ + "/secret.npy' is absolute"},
      {JobNaming("../secret.npy"), "source 'train': data path '../secret.npy' climbs out"},
      {JobNaming("sets/../../secret.npy"), "climbs out of the data root"},
      {JobNaming("sets/out.npy"), "source 'train': data path 'sets/out.npy' leads out"},
      {JobNaming("sets/x.npy", "missing.npy"),
       "variable 'w': data path 'missing.npy' was not sent with the job and is not under"},
  };
  for (const auto& test : cases) {
    StatusOr<JobData> data = CheckJobData({}, test.job, root_, 1 << 20);
    EXPECT_EQ(data.status().code(), StatusCode::kInvalidArgument) << test.expected;
    EXPECT_THAT(data.status().message(), HasSubstr(test.expected));
  }
}

TEST_F(JobDataTest, WithoutADataRootOnlySentFilesCanBeNamed) {
  StatusOr<JobData> data = CheckJobData({}, JobNaming("sets/x.npy"), "", 1 << 20);
  EXPECT_THAT(data.status().message(), HasSubstr("the server has no data root"));
}

TEST_F(JobDataTest, SentFilesMustBeRelativeWithoutDotDotAndWithinTheLimit) {
  for (const std::string path : {"/abs.npy", "a/../b.npy", "../b.npy", ""}) {
    proto::JobSubmission submission;
    submission.add_data_file()->set_path(path);
    EXPECT_EQ(CheckJobData(submission, {}, root_, 1 << 20).status().code(),
              StatusCode::kInvalidArgument)
        << path;
  }
  proto::JobSubmission big;
  proto::DataFile* file = big.add_data_file();
  file->set_path("big.npy");
  file->set_content(std::string(2000, 'x'));
  EXPECT_EQ(CheckJobData(big, {}, root_, 1000).status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace service
}  // namespace softwire
