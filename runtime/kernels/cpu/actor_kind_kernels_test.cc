// The actor-kind kernels: source (through data/), variable (through data/'s initializers),
// accumulate and sink.
#include <gtest/gtest.h>

#include <cmath>
#include <mutex>
#include <tuple>

#include "base/random.h"
#include "data/initializer.h"
#include "data/synthetic_dataset.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/kernel_harness.h"
#include "runtime/kernels/testing/threaded_test_runner.h"

namespace softwire {
namespace runtime {
namespace {

class ActorKindKernelsTest : public ::testing::Test {
 protected:
  ActorKindKernelsTest() { RegisterCpuKernels(&registry_); }

  KernelRegistry registry_;
  SerialRunner runner_;
};

// A synthetic source with a float output x [3] and an int32 label, micro-batches of 8.
proto::DataSource SyntheticSource() {
  proto::DataSource source;
  source.set_name("train");
  proto::SourceOutput* x = source.add_output();
  x->set_name("x");
  x->set_dtype(proto::DATA_TYPE_FLOAT32);
  x->add_sample_dims(3);
  proto::SourceOutput* label = source.add_output();
  label->set_name("label");
  label->set_dtype(proto::DATA_TYPE_INT32);
  source.mutable_synthetic()->set_seed(42);
  source.mutable_synthetic()->set_int_high(10);
  return source;
}

TEST_F(ActorKindKernelsTest, SourceFillsItsSliceOfTheFiringsPiece) {
  // This actor holds samples [2, 5) of each micro-batch of 8.
  KernelHarness harness("source", {}, {},
                        {HostTensor::Zeros(DType::kFloat32, Shape({3, 3})),
                         HostTensor::Zeros(DType::kInt32, Shape({3}))});
  harness.plan().mutable_schedule()->set_micro_batch_size(8);
  harness.actor().set_kind(proto::ACTOR_KIND_SOURCE);
  *harness.actor().mutable_source()->mutable_dataset() = SyntheticSource();
  harness.actor().mutable_source()->set_sample_begin(2);
  harness.actor().mutable_source()->set_sample_end(5);
  ASSERT_TRUE(harness.Create(registry_).ok());
  ASSERT_TRUE(harness.Run(&runner_, /*firing=*/3, /*first_piece=*/3).ok());
  const uint64_t x_seed = data::SyntheticStreamSeed(42, 0);
  const uint64_t label_seed = data::SyntheticStreamSeed(42, 1);
  for (int64_t j = 0; j < 3; ++j) {
    const int64_t sample = 3 * 8 + 2 + j;  // Logical sample of row j.
    for (int64_t e = 0; e < 3; ++e) {
      EXPECT_EQ(harness.output(0).floats[j * 3 + e],
                static_cast<float>(NormalAt(x_seed, sample * 3 + e)));
    }
    EXPECT_EQ(harness.output(1).ints[j], UniformIntAt(label_seed, sample, 10));
  }
}

TEST_F(ActorKindKernelsTest, SourceFillsALargeSliceInRowRangesOnSeveralThreads) {
  // Samples [3, 2003) of micro-batches of 2048 with 12 floats each: 24,000 elements, enough to
  // split; 2,000 rows over 3 threads meet no row boundary evenly. Two firings: the second
  // reuses the ranges planned by the first.
  proto::DataSource source = SyntheticSource();
  source.mutable_output(0)->set_sample_dims(0, 12);
  KernelHarness harness("source", {}, {},
                        {HostTensor::Zeros(DType::kFloat32, Shape({2000, 12})),
                         HostTensor::Zeros(DType::kInt32, Shape({2000}))});
  harness.plan().mutable_schedule()->set_micro_batch_size(2048);
  harness.actor().set_kind(proto::ACTOR_KIND_SOURCE);
  *harness.actor().mutable_source()->mutable_dataset() = source;
  harness.actor().mutable_source()->set_sample_begin(3);
  harness.actor().mutable_source()->set_sample_end(2003);
  ASSERT_TRUE(harness.Create(registry_).ok());
  ThreadedTestRunner threads(3, ThreadedTestRunner::Split::kEven);
  const uint64_t x_seed = data::SyntheticStreamSeed(42, 0);
  const uint64_t label_seed = data::SyntheticStreamSeed(42, 1);
  for (int64_t piece : {int64_t{1}, int64_t{4}}) {
    ASSERT_TRUE(harness.Run(&threads, /*firing=*/piece, /*first_piece=*/piece).ok());
    int64_t wrong = 0;
    for (int64_t j = 0; j < 2000; ++j) {
      const int64_t sample = piece * 2048 + 3 + j;
      for (int64_t e = 0; e < 12; ++e) {
        wrong += harness.output(0).floats[j * 12 + e] !=
                 static_cast<float>(NormalAt(x_seed, sample * 12 + e));
      }
      wrong += harness.output(1).ints[j] != UniformIntAt(label_seed, sample, 10);
    }
    EXPECT_EQ(wrong, 0) << "piece " << piece;
  }
  EXPECT_EQ(threads.parallel_calls(), 2);
}

TEST_F(ActorKindKernelsTest, SourceRejectsOutputsThatDoNotMatchTheDataset) {
  KernelHarness harness("source", {}, {},
                        {HostTensor::Zeros(DType::kFloat32, Shape({3, 4})),
                         HostTensor::Zeros(DType::kInt32, Shape({3}))});
  harness.plan().mutable_schedule()->set_micro_batch_size(8);
  *harness.actor().mutable_source()->mutable_dataset() = SyntheticSource();
  harness.actor().mutable_source()->set_sample_end(3);
  Status created = harness.Create(registry_);
  EXPECT_EQ(created.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(created.message().find("output 'x'"), std::string::npos) << created;
}

TEST_F(ActorKindKernelsTest, VariableWritesItsPartOnTheFirstFiringOnly) {
  proto::Initializer initializer;
  initializer.mutable_normal()->set_stddev(0.5);
  initializer.mutable_normal()->set_seed(7);
  const Shape logical({4, 6});
  KernelHarness harness("variable", {}, {}, {HostTensor::Zeros(DType::kFloat32, Shape({4, 3}))});
  harness.actor().set_kind(proto::ACTOR_KIND_VARIABLE);
  proto::VariableActorDef* variable = harness.actor().mutable_variable();
  variable->set_variable("w");
  *variable->mutable_initializer() = initializer;
  variable->mutable_logical_tensor()->set_dtype(proto::DATA_TYPE_FLOAT32);
  for (int64_t extent : logical.dims()) variable->mutable_logical_tensor()->add_dims(extent);
  variable->set_split_axis(1);
  variable->set_split_begin(2);
  variable->set_split_end(5);
  ASSERT_TRUE(harness.Create(registry_).ok());
  ASSERT_TRUE(harness.Run(&runner_, /*firing=*/0).ok());

  HostTensor whole = HostTensor::Zeros(DType::kFloat32, logical);
  ASSERT_TRUE(
      data::InitializeVariable(initializer, logical, data::VariablePart(), "", whole.View()).ok());
  for (int64_t row = 0; row < 4; ++row) {
    for (int64_t column = 0; column < 3; ++column) {
      EXPECT_EQ(harness.output(0).floats[row * 3 + column], whole.floats[row * 6 + 2 + column]);
    }
  }
  // Later firings leave the value to the update actor.
  for (float& value : harness.output(0).floats) value = 123.0f;
  ASSERT_TRUE(harness.Run(&runner_, /*firing=*/1).ok());
  for (float value : harness.output(0).floats) EXPECT_EQ(value, 123.0f);
}

TEST_F(ActorKindKernelsTest, VariableRejectsAPartOutsideTheVariable) {
  KernelHarness harness("variable", {}, {}, {HostTensor::Zeros(DType::kFloat32, Shape({4, 3}))});
  proto::VariableActorDef* variable = harness.actor().mutable_variable();
  variable->mutable_initializer()->mutable_constant()->set_value(1);
  variable->mutable_logical_tensor()->add_dims(4);
  variable->mutable_logical_tensor()->add_dims(6);
  variable->set_split_axis(1);
  variable->set_split_begin(4);
  variable->set_split_end(7);
  EXPECT_EQ(harness.Create(registry_).code(), StatusCode::kInvalidArgument);
}

TEST_F(ActorKindKernelsTest, AccumulateOverwritesOnAFillsFirstFiringAndAddsAfter) {
  KernelHarness harness("accumulate", {}, {HostTensor::Float(Shape({3}), {1, 2, 3})},
                        {HostTensor::Float(Shape({3}), {100, 100, 100})});
  ASSERT_TRUE(harness.Create(registry_).ok());
  ASSERT_TRUE(harness.Run(&runner_, 0, 0, {true}).ok());
  EXPECT_EQ(harness.output(0).floats, (std::vector<float>{1, 2, 3}));
  harness.input(0).floats = {0.5f, -2, 10};
  ASSERT_TRUE(harness.Run(&runner_, 1, 1, {false}).ok());
  EXPECT_EQ(harness.output(0).floats, (std::vector<float>{1.5f, 0, 13}));
  ASSERT_TRUE(harness.Run(&runner_, 2, 2, {true}).ok());
  EXPECT_EQ(harness.output(0).floats, (std::vector<float>{0.5f, -2, 10}));
}

class RecordingReporter final : public OutputReporter {
 public:
  void Report(const std::string& output, int64_t piece, double value) override {
    std::lock_guard<std::mutex> lock(mutex_);
    reports_.emplace_back(output, piece, value);
  }
  std::vector<std::tuple<std::string, int64_t, double>> reports_;

 private:
  std::mutex mutex_;
};

TEST_F(ActorKindKernelsTest, SinkReportsItsOutputNamePieceAndValue) {
  KernelHarness harness("sink", {}, {HostTensor::Float(Shape(), {2.5f})}, {});
  harness.actor().set_kind(proto::ACTOR_KIND_SINK);
  harness.actor().mutable_sink()->set_output("loss");
  RecordingReporter reporter;
  ASSERT_TRUE(harness.Create(registry_, &reporter).ok());
  ASSERT_TRUE(harness.Run(&runner_, /*firing=*/6, /*first_piece=*/6).ok());
  ASSERT_EQ(reporter.reports_.size(), 1u);
  EXPECT_EQ(reporter.reports_[0], std::make_tuple(std::string("loss"), int64_t{6}, 2.5));
}

TEST_F(ActorKindKernelsTest, SinkNeedsAReporterAndAnOutputName) {
  KernelHarness harness("sink", {}, {HostTensor::Float(Shape(), {2.5f})}, {});
  harness.actor().mutable_sink()->set_output("loss");
  EXPECT_EQ(harness.Create(registry_, nullptr).code(), StatusCode::kInvalidArgument);
  KernelHarness unnamed("sink", {}, {HostTensor::Float(Shape(), {2.5f})}, {});
  RecordingReporter reporter;
  EXPECT_EQ(unnamed.Create(registry_, &reporter).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
