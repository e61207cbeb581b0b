// The checks Submit runs before it stores a job: what the fuzz target of the submit path found.
#include "service/submission_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "placement/cluster_spec.h"

namespace softwire {
namespace service {
namespace {

using ::testing::HasSubstr;

constexpr char kJob[] = R"(
name: "tiny"
source { name: "data" output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 4 }
         synthetic { seed: 1 } }
variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [4, 1]
           initializer { constant { value: 0.5 } } }
op { name: "y" type: "matmul" input: ["x", "w"] output: "y" }
op { name: "loss" type: "reduce_mean" input: "y" output: "loss" }
train { loss: "loss" optimizer { sgd { learning_rate: 0.1 } } steps: 1 micro_batch_size: 2 }
)";

proto::Cluster TwoCpus() {
  StatusOr<proto::Cluster> cluster = placement::ParseClusterShorthand("2cpu", 2);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  return *cluster;
}

TEST(SubmissionCheckTest, ACheckedSubmissionCarriesItsPlan) {
  proto::JobSubmission submission;
  submission.set_job_text(kJob);
  StatusOr<CheckedSubmission> checked = CheckSubmission(submission, TwoCpus(), "", "", {});
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ(checked->compiled.devices, 1);
  EXPECT_GT(checked->compiled.plan.actor_size(), 0);
}

TEST(SubmissionCheckTest, AGraphOverTheLimitIsRefusedFirst) {
  proto::JobSubmission submission;
  submission.set_job_text(kJob);
  JobLimits limits;
  limits.max_job_bytes = 16;
  StatusOr<CheckedSubmission> checked = CheckSubmission(submission, TwoCpus(), "", "", limits);
  EXPECT_EQ(checked.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(checked.status().message(), HasSubstr("over the server's limit of 16"));
}

// The product of three int32 degrees overflowed int64 before it was compared with the server.
TEST(SubmissionCheckTest, DegreesWhoseProductOverflowsAreRefusedAsTooManyDevices) {
  proto::JobSubmission submission;
  submission.set_job_text(kJob);
  proto::Parallelism* parallel = submission.mutable_settings()->mutable_parallel();
  parallel->set_data_parallel(2147483647);
  parallel->set_tensor_parallel(2147483647);
  parallel->set_pipeline_stages(2147483647);
  StatusOr<CheckedSubmission> checked = CheckSubmission(submission, TwoCpus(), "", "", {});
  EXPECT_EQ(checked.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(checked.status().message(), HasSubstr("needs 9223372036854775807 devices"));
}

}  // namespace
}  // namespace service
}  // namespace softwire
