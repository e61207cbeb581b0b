// A convolution's filter gradient does not depend on threads: the same bits on 1 and 2 kernel
// threads, and whatever OpenMP thread count the thread that created the convolution had (oneDNN
// fixes its split of the work, and so its sums' order, when a primitive is created:
// onednn_threads.h).
#include "runtime/kernels/cpu/onednn_convolution.h"

#include <omp.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "base/bfloat16.h"
#include "base/image_window.h"
#include "gtest/gtest.h"
#include "runtime/kernels/testing/threaded_test_runner.h"

namespace softwire {
namespace runtime {
namespace {

// A 3x3 convolution over [batch, channels, size, size] images in NHWC, as ResNet-20's.
ConvolutionShape FilterGradientShape(int64_t batch, int64_t channels, int64_t outputs, int64_t size,
                                     int64_t stride, DType dtype) {
  ConvolutionShape shape;
  StatusOr<ImageWindow> window =
      MakeImageWindow(size, size, {3, 3}, "input 'w'", {stride, stride}, {1, 1}, {1, 1});
  EXPECT_TRUE(window.ok()) << window.status().ToString();
  shape.window = *window;
  shape.x = Shape{batch, channels, size, size};
  shape.w = Shape{outputs, channels, 3, 3};
  shape.y = Shape{batch, outputs, window->output[0], window->output[1]};
  shape.input_dtype = dtype;
  shape.x_layout = Layout::kNhwc;
  shape.y_layout = Layout::kNhwc;
  return shape;
}

// Random values exactly representable in bfloat16, stored as `dtype`.
std::vector<uint8_t> RandomImages(int64_t count, DType dtype, uint32_t seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<float> normal;
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * (dtype == DType::kBFloat16 ? 2 : 4));
  for (int64_t i = 0; i < count; ++i) {
    const BFloat16 value = ToBFloat16(normal(generator));
    if (dtype == DType::kBFloat16) {
      std::memcpy(bytes.data() + 2 * i, &value, 2);
    } else {
      const float wide = ToFloat(value);
      std::memcpy(bytes.data() + 4 * i, &wide, 4);
    }
  }
  return bytes;
}

// dw of `shape` for fixed random dy and x, the convolution created while the calling thread's
// OpenMP thread count is `creating_threads`, run on `runner`.
std::vector<float> FilterGradient(const ConvolutionShape& shape, int creating_threads,
                                  ParallelRunner* runner) {
  const int previous = omp_get_max_threads();
  omp_set_num_threads(creating_threads);
  StatusOr<std::unique_ptr<OneDnnConvolution>> convolution =
      OneDnnConvolution::Create(ConvolutionPass::kBackwardWeights, shape);
  omp_set_num_threads(previous);
  EXPECT_TRUE(convolution.ok()) << convolution.status().ToString();
  if (!convolution.ok()) return {};
  const std::vector<uint8_t> dy = RandomImages(shape.y.NumElements(), shape.input_dtype, 1);
  const std::vector<uint8_t> x = RandomImages(shape.x.NumElements(), shape.input_dtype, 2);
  std::vector<float> dw(static_cast<size_t>(shape.w.NumElements()), -1.0f);
  (*convolution)->Run(runner, dy.data(), x.data(), nullptr, dw.data());
  return dw;
}

void ExpectSameBits(const std::vector<float>& expected, const std::vector<float>& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  size_t differing = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(&expected[i], &actual[i], sizeof(float)) != 0) ++differing;
  }
  EXPECT_EQ(differing, 0u) << "of " << expected.size() << " filter gradient elements";
}

class FilterGradientThreads : public ::testing::TestWithParam<DType> {};

TEST_P(FilterGradientThreads, AreTheSameBitsOnOneAndTwoKernelThreads) {
  for (int64_t stride : {1, 2}) {
    const ConvolutionShape shape = FilterGradientShape(16, 16, 16 * stride, 32, stride, GetParam());
    SerialRunner serial;
    ThreadedTestRunner two(2, ThreadedTestRunner::Split::kEven);
    const std::vector<float> one_thread = FilterGradient(shape, 1, &serial);
    ExpectSameBits(one_thread, FilterGradient(shape, 1, &two));
    EXPECT_GT(two.parallel_calls(), 0) << "the lanes did not run on two threads";
  }
}

// The thread that creates a kernel is whichever the host chose; its OpenMP setting (the
// machine's cores by default) must not change what the kernel computes.
TEST_P(FilterGradientThreads, DoNotDependOnTheCreatingThreadsOpenMpSetting) {
  for (int64_t stride : {1, 2}) {
    const ConvolutionShape shape = FilterGradientShape(16, 16, 16 * stride, 32, stride, GetParam());
    ThreadedTestRunner two(2, ThreadedTestRunner::Split::kEven);
    const std::vector<float> reference = FilterGradient(shape, 1, &two);
    for (int creating_threads : {2, 4}) {
      SCOPED_TRACE(creating_threads);
      ExpectSameBits(reference, FilterGradient(shape, creating_threads, &two));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, FilterGradientThreads,
                         ::testing::Values(DType::kFloat32, DType::kBFloat16));

}  // namespace
}  // namespace runtime
}  // namespace softwire
