#include "data/npy_dataset.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "base/npy.h"
#include "data/dataset.h"
#include "data/test_util.h"

namespace softwire {
namespace data {
namespace {

using testing_util::FloatView;
using testing_util::IntView;
using testing_util::TemporaryDirectory;

constexpr int kSamples = 10;

// A directory with x.npy (float32 [10, 2, 3], x[s] = 100 s + e) and y.npy (int32 [10], y[s] =
// s), so every filled row tells which sample it came from.
class NpyDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = temporary_.path();
    std::vector<float> x(kSamples * 6);
    for (int s = 0; s < kSamples; ++s) {
      for (int e = 0; e < 6; ++e) x[s * 6 + e] = static_cast<float>(100 * s + e);
    }
    std::vector<int32_t> y(kSamples);
    std::iota(y.begin(), y.end(), 0);
    ASSERT_TRUE(
        WriteNpy(directory_ + "/x.npy", DType::kFloat32, Shape({kSamples, 2, 3}), x.data()).ok());
    ASSERT_TRUE(WriteNpy(directory_ + "/y.npy", DType::kInt32, Shape({kSamples}), y.data()).ok());
  }

  static proto::DataSource Source(const std::string& text) {
    proto::DataSource source;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &source)) << text;
    return source;
  }

  static proto::DataSource XYSource(const std::string& extra = "") {
    return Source(R"(
      name: "train"
      output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: [2, 3] }
      output { name: "y" dtype: DATA_TYPE_INT32 }
      npy { path: "x.npy" path: "y.npy" )" +
                  extra + " }");
  }

  std::unique_ptr<Dataset> Open(const proto::DataSource& source) {
    StatusOr<std::unique_ptr<Dataset>> dataset = OpenDataset(source, directory_);
    EXPECT_TRUE(dataset.ok()) << dataset.status();
    return dataset.ok() ? std::move(dataset).value() : nullptr;
  }

  Status OpenError(const proto::DataSource& source) {
    StatusOr<std::unique_ptr<Dataset>> dataset = OpenDataset(source, directory_);
    EXPECT_FALSE(dataset.ok());
    return dataset.ok() ? Status::Ok() : dataset.status();
  }

  // The sample ids (y) of samples [begin, end) of micro-batch `piece`; also checks that x
  // holds the same samples.
  static std::vector<int32_t> Fill(const Dataset& dataset, int64_t piece, int64_t batch,
                                   int64_t begin, int64_t end) {
    std::vector<float> x((end - begin) * 6);
    std::vector<int32_t> y(end - begin);
    Status status =
        dataset.Fill(piece, batch, begin, end,
                     {FloatView(x, Shape({end - begin, 2, 3})), IntView(y, Shape({end - begin}))});
    EXPECT_TRUE(status.ok()) << status;
    for (int64_t j = 0; j < end - begin; ++j) {
      for (int e = 0; e < 6; ++e) EXPECT_EQ(x[j * 6 + e], static_cast<float>(100 * y[j] + e));
    }
    return y;
  }

  TemporaryDirectory temporary_;
  std::string directory_;
};

TEST_F(NpyDatasetTest, MicroBatchesReadSamplesInFileOrderAndWrapAroundTheEnd) {
  std::unique_ptr<Dataset> dataset = Open(XYSource());
  ASSERT_NE(dataset, nullptr);
  EXPECT_EQ(dataset->sample_count(), kSamples);
  EXPECT_EQ(dataset->resident_bytes(), kSamples * 6 * 4 + kSamples * 4);
  EXPECT_EQ(Fill(*dataset, 0, 4, 0, 4), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(Fill(*dataset, 1, 4, 0, 4), (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(Fill(*dataset, 2, 4, 0, 4), (std::vector<int32_t>{8, 9, 0, 1}));
  EXPECT_EQ(Fill(*dataset, 7, 4, 0, 4), (std::vector<int32_t>{8, 9, 0, 1}));
}

TEST_F(NpyDatasetTest, SlicesOfAMicroBatchEqualTheSameRowsOfTheWhole) {
  for (const std::string& extra : {std::string(""), std::string("shuffle: true seed: 5")}) {
    std::unique_ptr<Dataset> dataset = Open(XYSource(extra));
    ASSERT_NE(dataset, nullptr);
    for (int64_t piece = 0; piece < 9; ++piece) {
      std::vector<int32_t> whole = Fill(*dataset, piece, 6, 0, 6);
      std::vector<int32_t> joined = Fill(*dataset, piece, 6, 0, 2);
      for (int32_t id : Fill(*dataset, piece, 6, 2, 5)) joined.push_back(id);
      for (int32_t id : Fill(*dataset, piece, 6, 5, 6)) joined.push_back(id);
      EXPECT_EQ(joined, whole) << extra << " piece " << piece;
    }
  }
}

TEST_F(NpyDatasetTest, ShuffledEpochsArePermutationsOfTheSamplesRedrawnEachEpoch) {
  std::unique_ptr<Dataset> dataset = Open(XYSource("shuffle: true seed: 11"));
  ASSERT_NE(dataset, nullptr);
  std::vector<std::vector<int32_t>> epochs;
  for (int64_t epoch = 0; epoch < 4; ++epoch) {
    // Micro-batch size 5: two pieces per epoch.
    std::vector<int32_t> order = Fill(*dataset, 2 * epoch, 5, 0, 5);
    for (int32_t id : Fill(*dataset, 2 * epoch + 1, 5, 0, 5)) order.push_back(id);
    std::vector<int32_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int32_t> all(kSamples);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all) << "epoch " << epoch;
    epochs.push_back(order);
  }
  std::set<std::vector<int32_t>> distinct(epochs.begin(), epochs.end());
  EXPECT_GE(distinct.size(), 3u) << "the permutation should change from epoch to epoch";
  std::vector<int32_t> file_order(kSamples);
  std::iota(file_order.begin(), file_order.end(), 0);
  EXPECT_EQ(distinct.count(file_order), 0u);
}

TEST_F(NpyDatasetTest, ShuffleIsAFunctionOfSeedAndEpochOnly) {
  std::unique_ptr<Dataset> first = Open(XYSource("shuffle: true seed: 3"));
  std::unique_ptr<Dataset> second = Open(XYSource("shuffle: true seed: 3"));
  std::unique_ptr<Dataset> other_seed = Open(XYSource("shuffle: true seed: 4"));
  ASSERT_TRUE(first && second && other_seed);
  // Read `second` backwards and in odd-sized pieces: order of reads must not matter.
  std::vector<int32_t> backwards;
  for (int64_t piece = 9; piece >= 0; --piece) {
    std::vector<int32_t> ids = Fill(*second, piece, 3, 0, 3);
    backwards.insert(backwards.begin(), ids.begin(), ids.end());
  }
  std::vector<int32_t> forwards;
  for (int64_t piece = 0; piece < 10; ++piece) {
    for (int32_t id : Fill(*first, piece, 3, 0, 3)) forwards.push_back(id);
  }
  EXPECT_EQ(forwards, backwards);
  std::vector<int32_t> other;
  for (int64_t piece = 0; piece < 10; ++piece) {
    for (int32_t id : Fill(*other_seed, piece, 3, 0, 3)) other.push_back(id);
  }
  EXPECT_NE(forwards, other);
  // The documented definition.
  for (int64_t position = 0; position < 30; ++position) {
    std::vector<int64_t> permutation = EpochPermutation(3, position / kSamples, kSamples);
    EXPECT_EQ(forwards[position], permutation[position % kSamples]);
  }
}

TEST_F(NpyDatasetTest, ConcurrentFillsAgreeWithSequentialFills) {
  std::unique_ptr<Dataset> reference = Open(XYSource("shuffle: true seed: 9"));
  std::unique_ptr<Dataset> shared = Open(XYSource("shuffle: true seed: 9"));
  ASSERT_TRUE(reference && shared);
  constexpr int kThreads = 4;
  constexpr int kPiecesPerThread = 200;  // 7-sample pieces span 140 epochs per thread.
  std::vector<std::vector<int32_t>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPiecesPerThread; ++i) {
        int64_t piece = i * kThreads + t;
        for (int32_t id : Fill(*shared, piece, 7, 0, 7)) results[t].push_back(id);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPiecesPerThread; ++i) {
      std::vector<int32_t> expected = Fill(*reference, i * kThreads + t, 7, 0, 7);
      std::vector<int32_t> got(results[t].begin() + i * 7, results[t].begin() + (i + 1) * 7);
      ASSERT_EQ(got, expected) << "thread " << t << " piece " << i * kThreads + t;
    }
  }
}

TEST_F(NpyDatasetTest, RelativePathsResolveAgainstTheJobDirectory) {
  EXPECT_TRUE(OpenDataset(XYSource(), directory_).ok());
  proto::DataSource absolute = XYSource();
  absolute.mutable_npy()->set_path(0, directory_ + "/x.npy");
  absolute.mutable_npy()->set_path(1, directory_ + "/y.npy");
  EXPECT_TRUE(OpenDataset(absolute, "/nonexistent").ok());
  StatusOr<std::unique_ptr<Dataset>> elsewhere = OpenDataset(XYSource(), "/nonexistent");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.status().code(), StatusCode::kNotFound);
  EXPECT_NE(elsewhere.status().message().find("/nonexistent/x.npy"), std::string::npos)
      << elsewhere.status();
  EXPECT_NE(elsewhere.status().message().find("source 'train': output 'x'"), std::string::npos)
      << elsewhere.status();
}

TEST_F(NpyDatasetTest, AFileOfTheWrongDtypeIsRejectedNamingSourceOutputAndFile) {
  proto::DataSource source = XYSource();
  source.mutable_output(1)->set_dtype(proto::DATA_TYPE_FLOAT32);
  Status status = OpenError(source);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  for (const char* part : {"source 'train'", "output 'y'", "y.npy", "int32", "float32"}) {
    EXPECT_NE(status.message().find(part), std::string::npos) << part << " in " << status;
  }
}

TEST_F(NpyDatasetTest, AFileWithOtherSampleDimsIsRejectedNamingTheFile) {
  proto::DataSource source = XYSource();
  source.mutable_output(0)->set_sample_dims(1, 2);  // Declares [2, 2]; the file has [2, 3].
  Status status = OpenError(source);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  for (const char* part : {"output 'x'", "x.npy", "[10, 2, 3]", "[2, 2]"}) {
    EXPECT_NE(status.message().find(part), std::string::npos) << part << " in " << status;
  }
}

TEST_F(NpyDatasetTest, FilesWithDifferentSampleCountsAreRejectedNamingBothFiles) {
  std::vector<int32_t> short_labels(7, 0);
  ASSERT_TRUE(
      WriteNpy(directory_ + "/short.npy", DType::kInt32, Shape({7}), short_labels.data()).ok());
  proto::DataSource source = XYSource();
  source.mutable_npy()->set_path(1, "short.npy");
  Status status = OpenError(source);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  for (const char* part : {"output 'y'", "short.npy", "7 samples", "x.npy", "10"}) {
    EXPECT_NE(status.message().find(part), std::string::npos) << part << " in " << status;
  }
}

TEST_F(NpyDatasetTest, APathCountOtherThanTheOutputCountIsRejected) {
  proto::DataSource source = XYSource();
  source.mutable_npy()->mutable_path()->RemoveLast();
  Status status = OpenError(source);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("1 paths for 2 outputs"), std::string::npos) << status;
}

TEST_F(NpyDatasetTest, AScalarOrEmptyFileIsRejected) {
  float scalar = 1.0f;
  ASSERT_TRUE(WriteNpy(directory_ + "/scalar.npy", DType::kFloat32, Shape(), &scalar).ok());
  proto::DataSource scalar_source = Source(R"(
      name: "s" output { name: "v" dtype: DATA_TYPE_FLOAT32 } npy { path: "scalar.npy" })");
  EXPECT_NE(OpenError(scalar_source).message().find("scalar.npy"), std::string::npos);

  ASSERT_TRUE(WriteNpy(directory_ + "/empty.npy", DType::kFloat32, Shape({0}), &scalar).ok());
  proto::DataSource empty_source = Source(R"(
      name: "s" output { name: "v" dtype: DATA_TYPE_FLOAT32 } npy { path: "empty.npy" })");
  EXPECT_NE(OpenError(empty_source).message().find("no samples"), std::string::npos);
}

TEST_F(NpyDatasetTest, FillRejectsViewsThatDoNotMatchTheDeclaration) {
  std::unique_ptr<Dataset> dataset = Open(XYSource());
  ASSERT_NE(dataset, nullptr);
  std::vector<float> x(4 * 6);
  std::vector<int32_t> y(4);
  std::vector<float> y_as_float(4);
  Status wrong_dtype = dataset->Fill(
      0, 4, 0, 4, {FloatView(x, Shape({4, 2, 3})), FloatView(y_as_float, Shape({4}))});
  EXPECT_EQ(wrong_dtype.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_dtype.message().find("output 'y'"), std::string::npos) << wrong_dtype;
  Status wrong_rows =
      dataset->Fill(0, 4, 0, 3, {FloatView(x, Shape({4, 2, 3})), IntView(y, Shape({4}))});
  EXPECT_EQ(wrong_rows.code(), StatusCode::kInvalidArgument);
  Status outside =
      dataset->Fill(0, 4, 2, 6, {FloatView(x, Shape({4, 2, 3})), IntView(y, Shape({4}))});
  EXPECT_EQ(outside.code(), StatusCode::kInvalidArgument);
  Status missing_view = dataset->Fill(0, 4, 0, 4, {FloatView(x, Shape({4, 2, 3}))});
  EXPECT_EQ(missing_view.code(), StatusCode::kInvalidArgument);
}

TEST_F(NpyDatasetTest, Int64AndFloat64FilesConvertOnLoad) {
  // np.save of int64 labels [0, 1, 2] and float64 features [[0.5], [1.5], [2.5]], written as
  // NumPy writes them.
  auto write_raw = [&](const std::string& name, const std::string& descr, const std::string& shape,
                       const std::string& payload) {
    std::string header =
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    header.append(63 - (10 + header.size()) % 64, ' ');
    header += '\n';
    std::string contents("\x93NUMPY\x01\x00", 8);
    contents += static_cast<char>(header.size());
    contents += '\0';
    contents += header + payload;
    ASSERT_TRUE(WriteFileAtomically(directory_ + "/" + name, contents).ok());
  };
  std::string labels, features;
  for (int64_t value : {0, 1, 2}) labels.append(reinterpret_cast<char*>(&value), 8);
  for (double value : {0.5, 1.5, 2.5}) features.append(reinterpret_cast<char*>(&value), 8);
  write_raw("labels.npy", "<i8", "(3,)", labels);
  write_raw("features.npy", "<f8", "(3, 1)", features);
  std::unique_ptr<Dataset> dataset = Open(Source(R"(
      name: "converted"
      output { name: "f" dtype: DATA_TYPE_FLOAT32 sample_dims: 1 }
      output { name: "l" dtype: DATA_TYPE_INT32 }
      npy { path: "features.npy" path: "labels.npy" })"));
  ASSERT_NE(dataset, nullptr);
  std::vector<float> f(3);
  std::vector<int32_t> l(3);
  ASSERT_TRUE(
      dataset->Fill(0, 3, 0, 3, {FloatView(f, Shape({3, 1})), IntView(l, Shape({3}))}).ok());
  EXPECT_EQ(f, (std::vector<float>{0.5f, 1.5f, 2.5f}));
  EXPECT_EQ(l, (std::vector<int32_t>{0, 1, 2}));
}

}  // namespace
}  // namespace data
}  // namespace softwire
