#include "base/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "base/file.h"

namespace softwire {
namespace {

std::string TemporaryPath(const std::string& name) {
  return testing::TempDir() + "/" + name;
}

TEST(NpyTest, WrittenArraysReadBackIdentically) {
  std::string path = TemporaryPath("round_trip.npy");
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.5f};
  ASSERT_TRUE(WriteNpy(path, DType::kFloat32, Shape({2, 3}), values.data()).ok());
  StatusOr<NpyArray> array = ReadNpy(path);
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->dtype, DType::kFloat32);
  EXPECT_EQ(array->shape, Shape({2, 3}));
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(array->As<float>()[i], values[i]);
}

TEST(NpyTest, Int64FilesConvertToInt32) {
  // Header written by hand as NumPy would for np.array([1, 2, 3], dtype=np.int64).
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string contents("\x93NUMPY\x01\x00", 8);
  contents += static_cast<char>(header.size());
  contents += '\0';
  contents += header;
  for (int64_t value : {1, 2, 3}) contents.append(reinterpret_cast<char*>(&value), 8);
  std::string path = TemporaryPath("int64.npy");
  ASSERT_TRUE(WriteFileAtomically(path, contents).ok());
  StatusOr<NpyArray> array = ReadNpy(path);
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->dtype, DType::kInt32);
  EXPECT_EQ(array->As<int32_t>()[2], 3);
}

TEST(NpyTest, TruncatedFilesNameThePath) {
  std::string path = TemporaryPath("truncated.npy");
  std::vector<float> values(100, 1.0f);
  ASSERT_TRUE(WriteNpy(path, DType::kFloat32, Shape({100}), values.data()).ok());
  StatusOr<std::string> contents = ReadFile(path);
  ASSERT_TRUE(contents.ok());
  ASSERT_TRUE(WriteFileAtomically(path, contents->substr(0, contents->size() - 40)).ok());
  StatusOr<NpyArray> array = ReadNpy(path);
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(array.status().message().find(path), std::string::npos);
}

// A file's bytes as NumPy writes them: a version 1.0 header for `header_dict`, then `data`.
std::string NpyBytes(std::string header_dict, const std::string& data) {
  header_dict.append(64 - (10 + header_dict.size() + 1) % 64, ' ');
  header_dict += '\n';
  std::string contents("\x93NUMPY\x01\x00", 8);
  contents += static_cast<char>(header_dict.size());
  contents += '\0';
  return contents + header_dict + data;
}

TEST(NpyTest, ParseNpyReadsTheBytesOfAFile) {
  std::string data(8, '\0');
  const float values[2] = {1.5f, -2.0f};
  std::memcpy(data.data(), values, 8);
  StatusOr<NpyArray> array =
      ParseNpy(NpyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", data));
  ASSERT_TRUE(array.ok()) << array.status();
  EXPECT_EQ(array->shape, Shape({2}));
  EXPECT_EQ(array->As<float>()[1], -2.0f);
}

TEST(NpyTest, AShapeWhoseSizeOverflowsIsDataLossNotACrash) {
  StatusOr<NpyArray> array = ParseNpy(NpyBytes(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "abcd"));
  EXPECT_EQ(array.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(array.status().message().find("more bytes than an int64 counts"), std::string::npos)
      << array.status();
}

TEST(NpyTest, MissingFilesAreNotFound) {
  StatusOr<NpyArray> array = ReadNpy(TemporaryPath("does_not_exist.npy"));
  EXPECT_EQ(array.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace softwire
