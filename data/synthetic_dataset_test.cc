#include "data/synthetic_dataset.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "base/random.h"
#include "data/dataset.h"
#include "data/test_util.h"

namespace softwire {
namespace data {
namespace {

using testing_util::FloatView;
using testing_util::IntView;

proto::DataSource Source(uint64_t seed, int64_t int_high) {
  proto::DataSource source;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
      name: "bench"
      output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: [3, 4] }
      output { name: "labels" dtype: DATA_TYPE_INT32 }
      output { name: "noise" dtype: DATA_TYPE_FLOAT32 sample_dims: [12] }
      synthetic {})",
                                                            &source));
  source.mutable_synthetic()->set_seed(seed);
  source.mutable_synthetic()->set_int_high(int_high);
  return source;
}

std::unique_ptr<Dataset> Open(const proto::DataSource& source) {
  StatusOr<std::unique_ptr<Dataset>> dataset = OpenDataset(source, ".");
  EXPECT_TRUE(dataset.ok()) << dataset.status();
  return dataset.ok() ? std::move(dataset).value() : nullptr;
}

struct Batch {
  std::vector<float> x;
  std::vector<int32_t> labels;
  std::vector<float> noise;
};

Batch Fill(const Dataset& dataset, int64_t piece, int64_t batch, int64_t begin, int64_t end) {
  int64_t rows = end - begin;
  Batch result{std::vector<float>(rows * 12), std::vector<int32_t>(rows),
               std::vector<float>(rows * 12)};
  Status status =
      dataset.Fill(piece, batch, begin, end,
                   {FloatView(result.x, Shape({rows, 3, 4})), IntView(result.labels, Shape({rows})),
                    FloatView(result.noise, Shape({rows, 12}))});
  EXPECT_TRUE(status.ok()) << status;
  return result;
}

TEST(SyntheticDatasetTest, ValuesFollowTheDocumentedFormula) {
  std::unique_ptr<Dataset> dataset = Open(Source(42, 10));
  ASSERT_NE(dataset, nullptr);
  EXPECT_EQ(dataset->sample_count(), 0);
  EXPECT_EQ(dataset->resident_bytes(), 0);
  Batch batch = Fill(*dataset, 3, 8, 0, 8);
  for (int64_t j = 0; j < 8; ++j) {
    uint64_t sample = 3 * 8 + j;
    for (int e = 0; e < 12; ++e) {
      EXPECT_EQ(batch.x[j * 12 + e],
                static_cast<float>(NormalAt(SyntheticStreamSeed(42, 0), sample * 12 + e)));
      EXPECT_EQ(batch.noise[j * 12 + e],
                static_cast<float>(NormalAt(SyntheticStreamSeed(42, 2), sample * 12 + e)));
    }
    EXPECT_EQ(batch.labels[j], UniformIntAt(SyntheticStreamSeed(42, 1), sample, 10));
  }
}

TEST(SyntheticDatasetTest, SlicesEqualTheSameRowsOfTheWholeMicroBatch) {
  std::unique_ptr<Dataset> dataset = Open(Source(7, 5));
  ASSERT_NE(dataset, nullptr);
  for (int64_t piece : {0, 1, 1000}) {
    Batch whole = Fill(*dataset, piece, 6, 0, 6);
    Batch head = Fill(*dataset, piece, 6, 0, 4);
    Batch tail = Fill(*dataset, piece, 6, 4, 6);
    EXPECT_EQ(std::vector<float>(whole.x.begin(), whole.x.begin() + 48), head.x);
    EXPECT_EQ(std::vector<float>(whole.x.begin() + 48, whole.x.end()), tail.x);
    EXPECT_EQ(std::vector<int32_t>(whole.labels.begin(), whole.labels.begin() + 4), head.labels);
    EXPECT_EQ(std::vector<int32_t>(whole.labels.begin() + 4, whole.labels.end()), tail.labels);
    EXPECT_EQ(std::vector<float>(whole.noise.begin() + 48, whole.noise.end()), tail.noise);
  }
}

TEST(SyntheticDatasetTest, SampleValuesDependOnlyOnTheirLogicalPosition) {
  // Sample 12 is row 0 of piece 3 at batch size 4 and row 2 of piece 1 at batch size 10.
  std::unique_ptr<Dataset> dataset = Open(Source(7, 5));
  ASSERT_NE(dataset, nullptr);
  Batch small = Fill(*dataset, 3, 4, 0, 1);
  Batch large = Fill(*dataset, 1, 10, 2, 3);
  EXPECT_EQ(small.x, large.x);
  EXPECT_EQ(small.labels, large.labels);
}

TEST(SyntheticDatasetTest, FloatsAreStandardNormalAndOutputsUseDistinctStreams) {
  std::unique_ptr<Dataset> dataset = Open(Source(1, 3));
  ASSERT_NE(dataset, nullptr);
  Batch batch = Fill(*dataset, 0, 4096, 0, 4096);
  double sum = 0, sum_squares = 0, cross = 0;
  for (size_t i = 0; i < batch.x.size(); ++i) {
    sum += batch.x[i];
    sum_squares += batch.x[i] * batch.x[i];
    cross += batch.x[i] * batch.noise[i];
  }
  double n = static_cast<double>(batch.x.size());
  // n = 49152: the standard error of the mean is 0.0045, of the variance about 0.0064.
  EXPECT_NEAR(sum / n, 0.0, 0.03);
  EXPECT_NEAR(sum_squares / n, 1.0, 0.04);
  EXPECT_NEAR(cross / n, 0.0, 0.03) << "x and noise must be independent streams";
}

TEST(SyntheticDatasetTest, IntsCoverExactlyZeroToIntHigh) {
  std::unique_ptr<Dataset> dataset = Open(Source(5, 3));
  ASSERT_NE(dataset, nullptr);
  Batch batch = Fill(*dataset, 0, 300, 0, 300);
  std::set<int32_t> seen(batch.labels.begin(), batch.labels.end());
  EXPECT_EQ(seen, (std::set<int32_t>{0, 1, 2}));
}

TEST(SyntheticDatasetTest, DifferentSeedsGiveDifferentData) {
  std::unique_ptr<Dataset> first = Open(Source(1, 3));
  std::unique_ptr<Dataset> second = Open(Source(2, 3));
  ASSERT_TRUE(first && second);
  EXPECT_NE(Fill(*first, 0, 4, 0, 4).x, Fill(*second, 0, 4, 0, 4).x);
}

TEST(SyntheticDatasetTest, IntOutputsWithoutIntHighAreRejectedNamingTheOutput) {
  StatusOr<std::unique_ptr<Dataset>> dataset = OpenDataset(Source(1, 0), ".");
  ASSERT_FALSE(dataset.ok());
  EXPECT_EQ(dataset.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dataset.status().message().find("source 'bench': output 'labels'"), std::string::npos)
      << dataset.status();
  EXPECT_NE(dataset.status().message().find("int_high"), std::string::npos);
}

TEST(SyntheticDatasetTest, OutputsWithoutDtypeAreRejected) {
  proto::DataSource source = Source(1, 3);
  source.mutable_output(2)->set_dtype(proto::DATA_TYPE_UNSPECIFIED);
  StatusOr<std::unique_ptr<Dataset>> dataset = OpenDataset(source, ".");
  ASSERT_FALSE(dataset.ok());
  EXPECT_NE(dataset.status().message().find("output 'noise'"), std::string::npos)
      << dataset.status();
}

TEST(SyntheticDatasetTest, SampleDimsWithAnEmptyAxisAreRejected) {
  proto::DataSource source = Source(1, 3);
  source.mutable_output(0)->set_sample_dims(1, 0);
  StatusOr<std::unique_ptr<Dataset>> dataset = OpenDataset(source, ".");
  ASSERT_FALSE(dataset.ok());
  EXPECT_NE(dataset.status().message().find("output 'x': sample_dims [3, 0]"), std::string::npos)
      << dataset.status();
}

TEST(SyntheticDatasetTest, ASourceWithoutDatasetIsRejected) {
  proto::DataSource source;
  source.set_name("nothing");
  source.add_output()->set_name("x");
  StatusOr<std::unique_ptr<Dataset>> dataset = OpenDataset(source, ".");
  ASSERT_FALSE(dataset.ok());
  EXPECT_NE(dataset.status().message().find("source 'nothing': no dataset"), std::string::npos)
      << dataset.status();
}

}  // namespace
}  // namespace data
}  // namespace softwire
