// Helpers shared by the data/ tests: a fresh temporary directory per test, and views over
// std::vector storage. Test-only; not part of softwire_data.
#ifndef SOFTWIRE_DATA_TEST_UTIL_H_
#define SOFTWIRE_DATA_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "base/tensor_view.h"

namespace softwire {
namespace data {
namespace testing_util {

// A new, empty directory under the test temp directory, removed with everything in it when the
// object goes out of scope. Unique across concurrent runs (several build trees may run their
// tests at once on one machine).
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string root = ::testing::TempDir();
    if (root.empty() || root.back() != '/') root += '/';
    std::string pattern = root + "softwire_data_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    char* created = ::mkdtemp(buffer.data());
    EXPECT_NE(created, nullptr) << "mkdtemp failed for " << pattern;
    path_ = created == nullptr ? root : std::string(created);
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    if (path_.find("softwire_data_") != std::string::npos) {
      std::filesystem::remove_all(path_, ignored);
    }
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

template <typename T>
TensorView ViewOf(std::vector<T>& storage, DType dtype, const Shape& shape) {
  EXPECT_EQ(static_cast<int64_t>(storage.size()), shape.NumElements());
  TensorView view;
  view.dtype = dtype;
  view.shape = shape;
  view.data = storage.data();
  return view;
}

inline TensorView FloatView(std::vector<float>& storage, const Shape& shape) {
  return ViewOf(storage, DType::kFloat32, shape);
}

inline TensorView IntView(std::vector<int32_t>& storage, const Shape& shape) {
  return ViewOf(storage, DType::kInt32, shape);
}

}  // namespace testing_util
}  // namespace data
}  // namespace softwire

#endif  // SOFTWIRE_DATA_TEST_UTIL_H_
