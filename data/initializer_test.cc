#include "data/initializer.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/npy.h"
#include "base/random.h"
#include "data/test_util.h"

namespace softwire {
namespace data {
namespace {

using testing_util::FloatView;
using testing_util::TemporaryDirectory;

proto::Initializer Parse(const std::string& text) {
  proto::Initializer initializer;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &initializer)) << text;
  return initializer;
}

// The whole variable; a failure is reported through gtest.
std::vector<float> Whole(const proto::Initializer& initializer, const Shape& shape,
                         const std::string& directory = ".") {
  std::vector<float> values(shape.NumElements());
  Status status =
      InitializeVariable(initializer, shape, VariablePart{}, directory, FloatView(values, shape));
  EXPECT_TRUE(status.ok()) << status;
  return values;
}

std::vector<float> Part(const proto::Initializer& initializer, const Shape& shape, int axis,
                        int64_t begin, int64_t end, const std::string& directory = ".") {
  std::vector<int64_t> dims = shape.dims();
  dims[axis] = end - begin;
  Shape part_shape(dims);
  std::vector<float> values(part_shape.NumElements());
  Status status = InitializeVariable(initializer, shape, VariablePart{axis, begin, end}, directory,
                                     FloatView(values, part_shape));
  EXPECT_TRUE(status.ok()) << status;
  return values;
}

// The elements of `whole` (shaped `shape`) whose index on `axis` lies in [begin, end).
std::vector<float> SliceOf(const std::vector<float>& whole, const Shape& shape, int axis,
                           int64_t begin, int64_t end) {
  int64_t outer = shape.NumElements(0, axis);
  int64_t inner = shape.NumElements(axis + 1, shape.rank());
  std::vector<float> slice;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t row = begin; row < end; ++row) {
      for (int64_t i = 0; i < inner; ++i) {
        slice.push_back(whole[(o * shape.dim(axis) + row) * inner + i]);
      }
    }
  }
  return slice;
}

// Every initializer kind: any slice on any axis equals that slice of the whole variable.
class InitializerPartsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InitializerPartsTest, EveryPartEqualsThatSliceOfTheWholeVariable) {
  TemporaryDirectory temporary;
  const std::string& directory = temporary.path();
  Shape shape({4, 5, 6});
  std::vector<float> stored(shape.NumElements());
  for (size_t i = 0; i < stored.size(); ++i) stored[i] = 0.25f * static_cast<float>(i);
  ASSERT_TRUE(WriteNpy(directory + "/w.npy", DType::kFloat32, shape, stored.data()).ok());

  proto::Initializer initializer = Parse(GetParam());
  std::vector<float> whole = Whole(initializer, shape, directory);
  for (int axis = 0; axis < 3; ++axis) {
    for (auto [begin, end] :
         std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 3}, {2, 4}, {0, 4}, {2, 2}}) {
      EXPECT_EQ(Part(initializer, shape, axis, begin, end, directory),
                SliceOf(whole, shape, axis, begin, end))
          << "axis " << axis << " [" << begin << ", " << end << ")";
    }
  }
  if (initializer.has_npy_path()) {
    EXPECT_EQ(whole, stored);
  }
}

INSTANTIATE_TEST_SUITE_P(AllKinds, InitializerPartsTest,
                         ::testing::Values("constant { value: 0.5 }",
                                           "normal { mean: 1 stddev: 0.02 seed: 7 }",
                                           "uniform { low: -0.1 high: 0.3 seed: 8 }",
                                           "npy_path: \"w.npy\""));

TEST(InitializerTest, ConstantFillsEveryElement) {
  std::vector<float> values = Whole(Parse("constant { value: -2.5 }"), Shape({3, 2}));
  EXPECT_EQ(values, std::vector<float>(6, -2.5f));
  EXPECT_EQ(Whole(Parse("constant {}"), Shape({2})), std::vector<float>(2, 0.0f));
}

TEST(InitializerTest, NormalValuesFollowTheDocumentedFormula) {
  Shape shape({300, 100});
  std::vector<float> values = Whole(Parse("normal { mean: 0.5 stddev: 2 seed: 13 }"), shape);
  for (int64_t i : {0, 1, 99, 100, 29999}) {
    EXPECT_EQ(values[i], static_cast<float>(0.5 + 2.0 * NormalAt(13, i))) << i;
  }
  double sum = 0, sum_squares = 0;
  for (float v : values) {
    sum += v;
    sum_squares += (v - 0.5) * (v - 0.5);
  }
  EXPECT_NEAR(sum / values.size(), 0.5, 0.05);
  EXPECT_NEAR(std::sqrt(sum_squares / values.size()), 2.0, 0.05);
}

TEST(InitializerTest, UniformValuesLieInTheHalfOpenRangeAndFollowTheFormula) {
  std::vector<float> values = Whole(Parse("uniform { low: -1 high: 3 seed: 2 }"), Shape({10000}));
  float lowest = values[0], highest = values[0];
  for (float v : values) {
    lowest = std::min(lowest, v);
    highest = std::max(highest, v);
  }
  EXPECT_GE(lowest, -1.0f);
  EXPECT_LT(highest, 3.0f);
  EXPECT_LT(lowest, -0.99f);
  EXPECT_GT(highest, 2.99f);
  EXPECT_EQ(values[17], static_cast<float>(-1.0 + 4.0 * UniformAt(2, 17)));
}

TEST(InitializerTest, ScalarVariablesAreSupported) {
  EXPECT_EQ(Whole(Parse("constant { value: 3 }"), Shape()), std::vector<float>{3.0f});
}

TEST(InitializerTest, AnNpyFileOfAnotherShapeIsRejectedNamingTheFile) {
  TemporaryDirectory temporary;
  const std::string& directory = temporary.path();
  std::vector<float> stored(6, 1.0f);
  ASSERT_TRUE(WriteNpy(directory + "/w.npy", DType::kFloat32, Shape({2, 3}), stored.data()).ok());
  std::vector<float> values(6);
  Status status = InitializeVariable(Parse("npy_path: \"w.npy\""), Shape({3, 2}), VariablePart{},
                                     directory, FloatView(values, Shape({3, 2})));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  for (const char* part : {"w.npy", "[2, 3]", "[3, 2]"}) {
    EXPECT_NE(status.message().find(part), std::string::npos) << part << " in " << status;
  }
}

TEST(InitializerTest, AMissingOrIntegerNpyFileIsRejectedNamingTheFile) {
  TemporaryDirectory temporary;
  const std::string& directory = temporary.path();
  std::vector<float> values(2);
  Status missing = InitializeVariable(Parse("npy_path: \"absent.npy\""), Shape({2}), VariablePart{},
                                      directory, FloatView(values, Shape({2})));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(directory + "/absent.npy"), std::string::npos) << missing;

  std::vector<int32_t> ints = {1, 2};
  ASSERT_TRUE(WriteNpy(directory + "/ints.npy", DType::kInt32, Shape({2}), ints.data()).ok());
  Status integer = InitializeVariable(Parse("npy_path: \"ints.npy\""), Shape({2}), VariablePart{},
                                      directory, FloatView(values, Shape({2})));
  EXPECT_EQ(integer.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(integer.message().find("ints.npy"), std::string::npos) << integer;
}

TEST(InitializerTest, Int32VariablesTakeConstantsAndInt32NpyFilesOnly) {
  TemporaryDirectory temporary;
  Shape shape({3, 4});
  std::vector<int32_t> stored(12);
  for (int i = 0; i < 12; ++i) stored[i] = 100 + i;
  ASSERT_TRUE(WriteNpy(temporary.path() + "/ids.npy", DType::kInt32, shape, stored.data()).ok());
  std::vector<int32_t> part(6);
  TensorView part_view = testing_util::IntView(part, Shape({3, 2}));
  ASSERT_TRUE(InitializeVariable(Parse("npy_path: \"ids.npy\""), shape, VariablePart{1, 2, 4},
                                 temporary.path(), part_view)
                  .ok());
  EXPECT_EQ(part, (std::vector<int32_t>{102, 103, 106, 107, 110, 111}));
  ASSERT_TRUE(InitializeVariable(Parse("constant { value: -7 }"), shape, VariablePart{1, 2, 4}, ".",
                                 part_view)
                  .ok());
  EXPECT_EQ(part, std::vector<int32_t>(6, -7));

  Status fractional = InitializeVariable(Parse("constant { value: 0.5 }"), shape,
                                         VariablePart{1, 2, 4}, ".", part_view);
  EXPECT_EQ(fractional.code(), StatusCode::kInvalidArgument);
  Status random = InitializeVariable(Parse("normal { stddev: 1 }"), shape, VariablePart{1, 2, 4},
                                     ".", part_view);
  EXPECT_NE(random.message().find("float32"), std::string::npos) << random;
  std::vector<float> floats(12, 0.0f);
  ASSERT_TRUE(
      WriteNpy(temporary.path() + "/floats.npy", DType::kFloat32, shape, floats.data()).ok());
  Status wrong_file = InitializeVariable(Parse("npy_path: \"floats.npy\""), shape,
                                         VariablePart{1, 2, 4}, temporary.path(), part_view);
  EXPECT_NE(wrong_file.message().find("floats.npy"), std::string::npos) << wrong_file;
}

TEST(InitializerTest, BadFieldsAreRejectedNamingTheField) {
  std::vector<float> values(4);
  TensorView view = FloatView(values, Shape({4}));
  Status negative =
      InitializeVariable(Parse("normal { stddev: -1 }"), Shape({4}), VariablePart{}, ".", view);
  EXPECT_NE(negative.message().find("normal.stddev"), std::string::npos) << negative;
  Status inverted = InitializeVariable(Parse("uniform { low: 2 high: 1 }"), Shape({4}),
                                       VariablePart{}, ".", view);
  EXPECT_NE(inverted.message().find("uniform.high"), std::string::npos) << inverted;
  Status unset = InitializeVariable(proto::Initializer(), Shape({4}), VariablePart{}, ".", view);
  EXPECT_EQ(unset.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unset.message().find("no kind"), std::string::npos) << unset;
}

TEST(InitializerTest, PartsOutsideTheVariableAndMismatchedViewsAreRejected) {
  proto::Initializer constant = Parse("constant { value: 1 }");
  std::vector<float> values(6);
  EXPECT_EQ(InitializeVariable(constant, Shape({2, 3}), VariablePart{2, 0, 1}, ".",
                               FloatView(values, Shape({2, 3})))
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(InitializeVariable(constant, Shape({2, 3}), VariablePart{1, 2, 4}, ".",
                               FloatView(values, Shape({2, 3})))
                .code(),
            StatusCode::kInvalidArgument);
  // The part [1, 3) of axis 1 needs a [2, 2] view, not [2, 3].
  Status wrong_view = InitializeVariable(constant, Shape({2, 3}), VariablePart{1, 1, 3}, ".",
                                         FloatView(values, Shape({2, 3})));
  EXPECT_EQ(wrong_view.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_view.message().find("[2, 2]"), std::string::npos) << wrong_view;
}

}  // namespace
}  // namespace data
}  // namespace softwire
