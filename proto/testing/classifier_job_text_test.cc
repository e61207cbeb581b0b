// ClassifierJobText writes a job file that parses as a proto::Job carrying every parameter.
#include "proto/testing/classifier_job_text.h"

#include <gtest/gtest.h>

#include "proto/job.pb.h"
#include "proto/text_format.h"

namespace softwire {
namespace proto_testing {
namespace {

proto::Job Parse(const std::string& text) {
  proto::Job job;
  Status parsed = proto::ParseTextFormat(text, "classifier.pbtxt", &job);
  EXPECT_TRUE(parsed.ok()) << parsed << "\n" << text;
  return job;
}

TEST(ClassifierJobText, TheDefaultsAreTheTinyJob) {
  const proto::Job job = Parse(ClassifierJobText({}));
  EXPECT_EQ(job.name(), "tiny");
  ASSERT_EQ(job.source_size(), 1);
  ASSERT_EQ(job.source(0).output_size(), 2);
  ASSERT_EQ(job.source(0).output(0).sample_dims_size(), 1);
  EXPECT_EQ(job.source(0).output(0).sample_dims(0), 4);
  EXPECT_EQ(job.source(0).synthetic().seed(), 7u);
  EXPECT_EQ(job.source(0).synthetic().int_high(), 3);
  ASSERT_EQ(job.variable_size(), 1);
  ASSERT_EQ(job.variable(0).dims_size(), 2);
  EXPECT_EQ(job.variable(0).dims(0), 4);
  EXPECT_EQ(job.variable(0).dims(1), 3);
  EXPECT_EQ(job.op_size(), 3);
  EXPECT_EQ(job.train().steps(), 4);
  EXPECT_EQ(job.train().micro_batch_size(), 8);
  EXPECT_EQ(job.train().micro_batches_per_step(), 2);
}

TEST(ClassifierJobText, EveryParameterReachesItsField) {
  ClassifierJob wide;
  wide.name = "wide";
  wide.features = 256;
  wide.classes = 1536;
  wide.data_seed = 3;
  wide.weight_seed = 2;
  wide.weight_stddev = 0.01;
  wide.steps = 12;
  wide.micro_batch_size = 4;
  wide.micro_batches_per_step = 1;
  const proto::Job job = Parse(ClassifierJobText(wide));
  EXPECT_EQ(job.name(), "wide");
  ASSERT_EQ(job.source_size(), 1);
  ASSERT_EQ(job.source(0).output_size(), 2);
  ASSERT_EQ(job.source(0).output(0).sample_dims_size(), 1);
  EXPECT_EQ(job.source(0).output(0).sample_dims(0), 256);
  EXPECT_EQ(job.source(0).synthetic().seed(), 3u);
  EXPECT_EQ(job.source(0).synthetic().int_high(), 1536);
  ASSERT_EQ(job.variable_size(), 1);
  ASSERT_EQ(job.variable(0).dims_size(), 2);
  EXPECT_EQ(job.variable(0).dims(0), 256);
  EXPECT_EQ(job.variable(0).dims(1), 1536);
  EXPECT_EQ(job.variable(0).initializer().normal().stddev(), 0.01);
  EXPECT_EQ(job.variable(0).initializer().normal().seed(), 2u);
  EXPECT_EQ(job.train().steps(), 12);
  EXPECT_EQ(job.train().micro_batch_size(), 4);
  EXPECT_EQ(job.train().micro_batches_per_step(), 1);
}

}  // namespace
}  // namespace proto_testing
}  // namespace softwire
