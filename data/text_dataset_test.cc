#include "data/text_dataset.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/file.h"
#include "base/random.h"
#include "data/dataset.h"
#include "data/test_util.h"

namespace softwire {
namespace data {
namespace {

using testing_util::IntView;
using testing_util::TemporaryDirectory;

constexpr int64_t kContext = 8;

class TextDatasetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = temporary_.path();
    // 200 bytes covering the high half of the byte range too (ids must be 0..255, unsigned).
    for (int i = 0; i < 200; ++i) text_ += static_cast<char>((i * 37 + 11) % 256);
    ASSERT_TRUE(WriteFileAtomically(directory_ + "/corpus.txt", text_).ok());
  }

  static proto::DataSource Source(const std::string& text_fields, int64_t ids_context = kContext,
                                  int64_t targets_context = kContext) {
    proto::DataSource source;
    std::string text = R"(
        name: "text"
        output { name: "ids" dtype: DATA_TYPE_INT32 sample_dims: )" +
                       std::to_string(ids_context) + R"( }
        output { name: "targets" dtype: DATA_TYPE_INT32 sample_dims: )" +
                       std::to_string(targets_context) + R"( }
        text { path: "corpus.txt" context: 8 )" +
                       text_fields + " }";
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &source)) << text;
    return source;
  }

  std::unique_ptr<Dataset> Open(const proto::DataSource& source) {
    StatusOr<std::unique_ptr<Dataset>> dataset = OpenDataset(source, directory_);
    EXPECT_TRUE(dataset.ok()) << dataset.status();
    return dataset.ok() ? std::move(dataset).value() : nullptr;
  }

  // ids and targets of samples [begin, end) of micro-batch `piece`, concatenated.
  static std::pair<std::vector<int32_t>, std::vector<int32_t>> Fill(const Dataset& dataset,
                                                                    int64_t piece, int64_t batch,
                                                                    int64_t begin, int64_t end) {
    std::vector<int32_t> ids((end - begin) * kContext), targets((end - begin) * kContext);
    Status status = dataset.Fill(piece, batch, begin, end,
                                 {IntView(ids, Shape({end - begin, kContext})),
                                  IntView(targets, Shape({end - begin, kContext}))});
    EXPECT_TRUE(status.ok()) << status;
    return {ids, targets};
  }

  int Byte(int64_t position) const { return static_cast<unsigned char>(text_[position]); }

  TemporaryDirectory temporary_;
  std::string directory_;
  std::string text_;
};

TEST_F(TextDatasetTest, WindowsAreTheFileBytesAtTheDocumentedOffsetsWithTargetsShiftedByOne) {
  std::unique_ptr<Dataset> dataset = Open(Source("seed: 17"));
  ASSERT_NE(dataset, nullptr);
  EXPECT_EQ(dataset->sample_count(), 200 - kContext);
  EXPECT_EQ(dataset->resident_bytes(), 200);
  auto [ids, targets] = Fill(*dataset, 2, 4, 0, 4);
  for (int64_t j = 0; j < 4; ++j) {
    int64_t offset = UniformIntAt(17, 2 * 4 + j, 200 - kContext);
    for (int64_t t = 0; t < kContext; ++t) {
      EXPECT_EQ(ids[j * kContext + t], Byte(offset + t)) << "sample " << j << " t " << t;
      EXPECT_EQ(targets[j * kContext + t], Byte(offset + t + 1)) << "sample " << j << " t " << t;
    }
  }
}

TEST_F(TextDatasetTest, IdsCoverTheWholeByteRangeAsUnsignedValues) {
  std::unique_ptr<Dataset> dataset = Open(Source("seed: 1"));
  ASSERT_NE(dataset, nullptr);
  auto [ids, targets] = Fill(*dataset, 0, 64, 0, 64);
  int above_127 = 0;
  for (int32_t id : ids) {
    ASSERT_GE(id, 0);
    ASSERT_LT(id, 256);
    above_127 += id > 127;
  }
  EXPECT_GT(above_127, 0);
}

TEST_F(TextDatasetTest, SlicesEqualTheSameRowsOfTheWholeMicroBatch) {
  std::unique_ptr<Dataset> dataset = Open(Source("seed: 3"));
  ASSERT_NE(dataset, nullptr);
  for (int64_t piece = 0; piece < 5; ++piece) {
    auto whole = Fill(*dataset, piece, 6, 0, 6);
    auto head = Fill(*dataset, piece, 6, 0, 1);
    auto tail = Fill(*dataset, piece, 6, 1, 6);
    std::vector<int32_t> ids = head.first, targets = head.second;
    ids.insert(ids.end(), tail.first.begin(), tail.first.end());
    targets.insert(targets.end(), tail.second.begin(), tail.second.end());
    EXPECT_EQ(ids, whole.first);
    EXPECT_EQ(targets, whole.second);
  }
}

TEST_F(TextDatasetTest, TrainFractionKeepsEveryWindowInsideTheHeadOfTheFile) {
  // 0.5 of 200 bytes: 100 usable; targets may reach byte 99 but never byte 100.
  std::unique_ptr<Dataset> dataset = Open(Source("seed: 5 train_fraction: 0.5"));
  ASSERT_NE(dataset, nullptr);
  EXPECT_EQ(dataset->sample_count(), 100 - kContext);
  EXPECT_EQ(dataset->resident_bytes(), 100);
  auto* text_dataset = dynamic_cast<TextDataset*>(dataset.get());
  ASSERT_NE(text_dataset, nullptr);
  int64_t largest = 0;
  for (int64_t sample = 0; sample < 5000; ++sample) {
    int64_t offset = text_dataset->WindowOffset(sample);
    ASSERT_GE(offset, 0);
    ASSERT_LT(offset + kContext, 100);
    largest = std::max(largest, offset);
  }
  EXPECT_EQ(largest, 100 - kContext - 1) << "the last window should be reachable";
}

TEST_F(TextDatasetTest, OutputsWhoseSampleDimsAreNotTheContextAreRejected) {
  StatusOr<std::unique_ptr<Dataset>> dataset =
      OpenDataset(Source("seed: 1", kContext, kContext + 1), directory_);
  ASSERT_FALSE(dataset.ok());
  EXPECT_EQ(dataset.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dataset.status().message().find("source 'text': output 'targets'"), std::string::npos)
      << dataset.status();
  EXPECT_NE(dataset.status().message().find("[context] = [8]"), std::string::npos);
}

TEST_F(TextDatasetTest, FloatOutputsAndWrongOutputCountsAreRejected) {
  proto::DataSource float_ids = Source("seed: 1");
  float_ids.mutable_output(0)->set_dtype(proto::DATA_TYPE_FLOAT32);
  StatusOr<std::unique_ptr<Dataset>> dataset = OpenDataset(float_ids, directory_);
  ASSERT_FALSE(dataset.ok());
  EXPECT_NE(dataset.status().message().find("output 'ids'"), std::string::npos);

  proto::DataSource one_output = Source("seed: 1");
  one_output.mutable_output()->RemoveLast();
  dataset = OpenDataset(one_output, directory_);
  ASSERT_FALSE(dataset.ok());
  EXPECT_NE(dataset.status().message().find("exactly two outputs"), std::string::npos);
}

TEST_F(TextDatasetTest, AFileNoLongerThanTheContextIsRejectedNamingTheFile) {
  // 0.04 of 200 bytes = 8 usable bytes: no room for a window and its shifted target.
  StatusOr<std::unique_ptr<Dataset>> dataset =
      OpenDataset(Source("seed: 1 train_fraction: 0.04"), directory_);
  ASSERT_FALSE(dataset.ok());
  EXPECT_NE(dataset.status().message().find("corpus.txt"), std::string::npos) << dataset.status();
  EXPECT_NE(dataset.status().message().find("8 usable bytes"), std::string::npos)
      << dataset.status();
}

TEST_F(TextDatasetTest, AMissingFileIsNotFoundAndNamesTheSource) {
  proto::DataSource source = Source("seed: 1");
  source.mutable_text()->set_path("missing.txt");
  StatusOr<std::unique_ptr<Dataset>> dataset = OpenDataset(source, directory_);
  ASSERT_FALSE(dataset.ok());
  EXPECT_EQ(dataset.status().code(), StatusCode::kNotFound);
  EXPECT_NE(dataset.status().message().find("source 'text'"), std::string::npos);
  EXPECT_NE(dataset.status().message().find("missing.txt"), std::string::npos);
}

TEST_F(TextDatasetTest, TrainFractionOutsideZeroToOneIsRejected) {
  StatusOr<std::unique_ptr<Dataset>> dataset =
      OpenDataset(Source("seed: 1 train_fraction: 1.5"), directory_);
  ASSERT_FALSE(dataset.ok());
  EXPECT_NE(dataset.status().message().find("train_fraction"), std::string::npos);
}

}  // namespace
}  // namespace data
}  // namespace softwire
