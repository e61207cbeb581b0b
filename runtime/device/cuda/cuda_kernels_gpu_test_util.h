// The fixture of the cuda kernels' GPU tests (cuda_kernels_gpu_test.cc: products,
// element-wise ops, reductions, updates, the synthetic source;
// cuda_transformer_kernels_gpu_test.cc: the transformer's row, embedding and layout kernels): each
// runs a kernel on the cpu and on a cuda device on the same random inputs and compares. Skips
// without a GPU, saying why.
//
// Tolerance: ||cuda - cpu|| / ||cpu|| (L2 over the output) at most kExact (1e-6) for ops that
// compute each element the same way (relu, bias_add, fill, copies, add_n, updates: FMA
// contraction may differ by an ulp), and kReordered (1e-5) for sums in another order and expf
// (matmul with TF32 off, reductions, softmax, cross entropy, gelu, layer_norm). A NaN or an
// infinity passes only where the cpu has the same. int32 and bfloat16 outputs (transpose, slice,
// assemble, casts) must equal the cpu's bit for bit.
#ifndef SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_KERNELS_GPU_TEST_UTIL_H_
#define SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_KERNELS_GPU_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/device/cuda/cuda_test_device.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cuda/cuda_kernels.h"

namespace softwire {
namespace runtime {
namespace testing {

inline std::vector<float> Random(int64_t n, uint32_t seed, float low = -2, float high = 2) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(static_cast<size_t>(n));
  for (float& value : values) value = uniform(generator);
  return values;
}

inline HostTensor RandomFloats(Shape shape, uint32_t seed, float low = -2, float high = 2) {
  return HostTensor::Float(shape, Random(shape.NumElements(), seed, low, high));
}

inline HostTensor Labels(int64_t rows, int32_t classes, uint32_t seed) {
  std::mt19937 generator(seed);
  std::vector<int32_t> labels(static_cast<size_t>(rows));
  for (int32_t& label : labels) label = static_cast<int32_t>(generator() % classes);
  return HostTensor::Int({rows}, labels);
}

inline double RelativeError(const std::vector<float>& got, const std::vector<float>& want) {
  double difference = 0;
  double norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    // NaN and infinity agree only with themselves (a cast's inputs hold both).
    if (std::isnan(got[i]) || std::isnan(want[i])) {
      if (std::isnan(got[i]) && std::isnan(want[i])) continue;
      return INFINITY;
    }
    if (std::isinf(got[i]) || std::isinf(want[i])) {
      if (got[i] == want[i]) continue;
      return INFINITY;
    }
    difference += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    norm += double(want[i]) * want[i];
  }
  return norm == 0 ? std::sqrt(difference) : std::sqrt(difference / norm);
}

inline std::vector<uint16_t> Bits(const std::vector<BFloat16>& values) {
  std::vector<uint16_t> bits;
  for (const BFloat16& value : values) bits.push_back(value.bits);
  return bits;
}

class CudaKernelsGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = WhyNoCudaDevice();
    if (!why.empty()) GTEST_SKIP() << why;
    RegisterCpuKernels(&cpu_);
    RegisterCudaKernels(&cuda_);
    auto device = CudaDevice::Create(CudaPlanDevice(), 1, DeviceOptions(), &cuda_);
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = std::move(device).value();
  }

  // Runs `make()`'s kernel on the cpu and on the device (`firings` firings each) and compares
  // every output, every input (updates write their weight) and the state.
  void ExpectSame(const std::function<KernelHarness()>& make, double tolerance, int firings = 1,
                  int64_t state_bytes = 0) {
    KernelHarness on_cpu = make();
    KernelHarness on_cuda = make();
    on_cpu.actor().set_state_bytes(state_bytes);
    on_cuda.actor().set_state_bytes(state_bytes);
    const std::string op = on_cpu.actor().kernel().op_type();
    ASSERT_TRUE(on_cpu.Create(cpu_).ok()) << op;
    ASSERT_TRUE(on_cuda.Create(cpu_).ok()) << op;  // Sizes its state.
    SerialRunner runner;
    for (int firing = 0; firing < firings; ++firing) {
      std::vector<bool> begins(on_cpu.actor().kernel().output_size(), firing == 0);
      Status ran = on_cpu.Run(&runner, firing, /*first_piece=*/firing, begins);
      ASSERT_TRUE(ran.ok()) << op << ": " << ran.ToString();
    }
    Status ran = RunOnCuda(device_.get(), cuda_, &on_cuda, firings);
    ASSERT_TRUE(ran.ok()) << op << ": " << ran.ToString();
    for (int i = 0; i < on_cpu.actor().kernel().output_size(); ++i) {
      if (on_cpu.output(i).dtype == DType::kInt32) {
        EXPECT_EQ(on_cuda.output(i).ints, on_cpu.output(i).ints) << op << " output " << i;
        continue;
      }
      if (on_cpu.output(i).dtype == DType::kBFloat16) {
        EXPECT_EQ(Bits(on_cuda.output(i).bf16s), Bits(on_cpu.output(i).bf16s))
            << op << " output " << i;
        continue;
      }
      double error = RelativeError(on_cuda.output(i).floats, on_cpu.output(i).floats);
      EXPECT_LE(error, tolerance) << op << " output " << i;
      std::cout << op << " output " << i << ": relative error " << error << "\n";
    }
    for (int i = 0; i < on_cpu.actor().kernel().input_size(); ++i) {
      if (on_cpu.input(i).dtype != DType::kFloat32) continue;
      EXPECT_LE(RelativeError(on_cuda.input(i).floats, on_cpu.input(i).floats), tolerance)
          << op << " input " << i << " (written in place)";
    }
    EXPECT_LE(RelativeError(on_cuda.state(), on_cpu.state()), tolerance) << op << " state";
  }

  // Runs `make()`'s kernel on the device twice and expects the same output bits both times.
  void ExpectTheSameBitsEveryRun(const std::function<KernelHarness()>& make) {
    KernelHarness first = make();
    KernelHarness second = make();
    ASSERT_TRUE(first.Create(cpu_).ok());
    ASSERT_TRUE(second.Create(cpu_).ok());
    ASSERT_TRUE(RunOnCuda(device_.get(), cuda_, &first).ok());
    ASSERT_TRUE(RunOnCuda(device_.get(), cuda_, &second).ok());
    for (int i = 0; i < first.actor().kernel().output_size(); ++i) {
      EXPECT_EQ(first.output(i).floats, second.output(i).floats) << "output " << i;
    }
  }

  KernelRegistry cpu_;
  KernelRegistry cuda_;
  std::unique_ptr<CudaDevice> device_;
};

constexpr double kExact = 1e-6;
constexpr double kReordered = 1e-5;

}  // namespace testing
}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_CUDA_CUDA_KERNELS_GPU_TEST_UTIL_H_
