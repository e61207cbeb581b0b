// Every cuda kernel against its cpu kernel on the same random inputs: forward ops and their
// gradients, the optimizer updates over several steps. Skips without a GPU, saying why.
//
// Tolerance: ||cuda - cpu|| / ||cpu|| (L2 over the output) at most 1e-6 for ops that compute
// each element the same way (relu, bias_add, fill, copies, add_n, updates: FMA contraction may
// differ by an ulp), and 1e-5 for sums in another order and expf (matmul with TF32 off,
// reductions, softmax, cross entropy, gelu). NaN never passes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "runtime/device/cuda/cuda_test_device.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/cuda/cuda_kernels.h"

namespace softwire {
namespace runtime {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed, float low = -2, float high = 2) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(static_cast<size_t>(n));
  for (float& value : values) value = uniform(generator);
  return values;
}

HostTensor RandomFloats(Shape shape, uint32_t seed, float low = -2, float high = 2) {
  return HostTensor::Float(shape, Random(shape.NumElements(), seed, low, high));
}

HostTensor Labels(int64_t rows, int32_t classes, uint32_t seed) {
  std::mt19937 generator(seed);
  std::vector<int32_t> labels(static_cast<size_t>(rows));
  for (int32_t& label : labels) label = static_cast<int32_t>(generator() % classes);
  return HostTensor::Int({rows}, labels);
}

double RelativeError(const std::vector<float>& got, const std::vector<float>& want) {
  double difference = 0;
  double norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) != std::isnan(want[i])) return INFINITY;
    difference += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    norm += double(want[i]) * want[i];
  }
  return norm == 0 ? std::sqrt(difference) : std::sqrt(difference / norm);
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
      if (on_cpu.output(i).dtype != DType::kFloat32) continue;
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

  KernelRegistry cpu_;
  KernelRegistry cuda_;
  std::unique_ptr<CudaDevice> device_;
};

constexpr double kExact = 1e-6;
constexpr double kReordered = 1e-5;

TEST_F(CudaKernelsGpuTest, MatmulInEveryTransposeMatchesTheCpu) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      ExpectSame(
          [&] {
            return KernelHarness(
                "matmul", {BoolAttribute("transpose_a", ta), BoolAttribute("transpose_b", tb)},
                {RandomFloats(ta ? Shape({96, 64}) : Shape({64, 96}), 1),
                 RandomFloats(tb ? Shape({80, 96}) : Shape({96, 80}), 2)},
                {HostTensor::Zeros(DType::kFloat32, {64, 80})});
          },
          kReordered);
    }
  }
}

TEST_F(CudaKernelsGpuTest, BatchMatmulMatchesTheCpu) {
  ExpectSame(
      [] {
        return KernelHarness("batch_matmul", {BoolAttribute("transpose_b", true)},
                             {RandomFloats({4, 3, 32, 16}, 3), RandomFloats({4, 3, 24, 16}, 4)},
                             {HostTensor::Zeros(DType::kFloat32, {4, 3, 32, 24})});
      },
      kReordered);
}

TEST_F(CudaKernelsGpuTest, ElementwiseOpsAndTheirGradientsMatchTheCpu) {
  const Shape shape({37, 129});
  ExpectSame(
      [&] {
        return KernelHarness("relu", {}, {RandomFloats(shape, 5)},
                             {HostTensor::Zeros(DType::kFloat32, shape)});
      },
      kExact);
  ExpectSame(
      [&] {
        return KernelHarness("relu_grad", {}, {RandomFloats(shape, 6), RandomFloats(shape, 7)},
                             {HostTensor::Zeros(DType::kFloat32, shape)});
      },
      kExact);
  ExpectSame(
      [&] {
        return KernelHarness("gelu", {}, {RandomFloats(shape, 8)},
                             {HostTensor::Zeros(DType::kFloat32, shape)});
      },
      kReordered);
  ExpectSame(
      [&] {
        return KernelHarness("gelu_grad", {}, {RandomFloats(shape, 9), RandomFloats(shape, 10)},
                             {HostTensor::Zeros(DType::kFloat32, shape)});
      },
      kReordered);
  ExpectSame(
      [&] {
        return KernelHarness("scale", {FloatAttribute("factor", 0.37)}, {RandomFloats(shape, 11)},
                             {HostTensor::Zeros(DType::kFloat32, shape)});
      },
      kExact);
  ExpectSame(
      [&] {
        return KernelHarness("fill",
                             {IntsAttribute("shape", shape.dims()), FloatAttribute("value", -1.5)},
                             {}, {HostTensor::Zeros(DType::kFloat32, shape)});
      },
      kExact);
  ExpectSame(
      [&] {
        return KernelHarness("identity", {}, {RandomFloats(shape, 12)},
                             {HostTensor::Zeros(DType::kFloat32, shape)});
      },
      kExact);
  ExpectSame(
      [&] {
        return KernelHarness("copy", {}, {RandomFloats(shape, 13)},
                             {HostTensor::Zeros(DType::kFloat32, shape)});
      },
      kExact);
  ExpectSame(
      [&] {
        std::vector<HostTensor> inputs;
        for (uint32_t k = 0; k < 11; ++k) inputs.push_back(RandomFloats(shape, 20 + k));
        return KernelHarness("add_n", {}, inputs, {HostTensor::Zeros(DType::kFloat32, shape)});
      },
      kExact);
}

TEST_F(CudaKernelsGpuTest, BroadcastingBinaryOpsMatchTheCpu) {
  for (const char* op : {"add", "sub", "mul"}) {
    ExpectSame(
        [&] {
          return KernelHarness(op, {}, {RandomFloats({8, 5, 3}, 31), RandomFloats({5, 1}, 32)},
                               {HostTensor::Zeros(DType::kFloat32, {8, 5, 3})});
        },
        kExact);
    ExpectSame(
        [&] {
          return KernelHarness(op, {}, {RandomFloats({1, 6}, 33), RandomFloats({4, 1}, 34)},
                               {HostTensor::Zeros(DType::kFloat32, {4, 6})});
        },
        kExact);
  }
}

TEST_F(CudaKernelsGpuTest, BiasSoftmaxCrossEntropyAndReductionsMatchTheCpu) {
  ExpectSame(
      [] {
        return KernelHarness("bias_add", {}, {RandomFloats({64, 100}, 40), RandomFloats({100}, 41)},
                             {HostTensor::Zeros(DType::kFloat32, {64, 100})});
      },
      kExact);
  ExpectSame(
      [] {
        return KernelHarness("bias_add_grad", {}, {RandomFloats({512, 100}, 42)},
                             {HostTensor::Zeros(DType::kFloat32, {100})});
      },
      kReordered);
  ExpectSame(
      [] {
        return KernelHarness("softmax", {}, {RandomFloats({3, 50, 77}, 43)},
                             {HostTensor::Zeros(DType::kFloat32, {3, 50, 77})});
      },
      kReordered);
  ExpectSame(
      [] {
        return KernelHarness("softmax", {BoolAttribute("causal", true)},
                             {RandomFloats({2, 16, 16}, 44)},
                             {HostTensor::Zeros(DType::kFloat32, {2, 16, 16})});
      },
      kReordered);
  ExpectSame(
      [] {
        return KernelHarness("softmax_grad", {},
                             {RandomFloats({40, 33}, 45), RandomFloats({40, 33}, 46, 0, 1)},
                             {HostTensor::Zeros(DType::kFloat32, {40, 33})});
      },
      kReordered);
  ExpectSame(
      [] {
        return KernelHarness("softmax_cross_entropy", {},
                             {RandomFloats({512, 10}, 47), Labels(512, 10, 48)},
                             {HostTensor::Zeros(DType::kFloat32, {512})});
      },
      kReordered);
  ExpectSame(
      [] {
        return KernelHarness(
            "softmax_cross_entropy_grad", {},
            {RandomFloats({512}, 49), RandomFloats({512, 10}, 50), Labels(512, 10, 51)},
            {HostTensor::Zeros(DType::kFloat32, {512, 10})});
      },
      kReordered);
  ExpectSame(
      [] {
        return KernelHarness("reduce_mean", {}, {RandomFloats({512}, 52)},
                             {HostTensor::Zeros(DType::kFloat32, {})});
      },
      kReordered);
  ExpectSame(
      [] {
        return KernelHarness("reduce_sum", {IntsAttribute("axes", {0, 2})},
                             {RandomFloats({6, 7, 8, 9}, 53)},
                             {HostTensor::Zeros(DType::kFloat32, {7, 9})});
      },
      kReordered);
  ExpectSame(
      [] {
        return KernelHarness(
            "reduce_mean", {IntsAttribute("axes", {-1}), BoolAttribute("keepdims", true)},
            {RandomFloats({6, 70}, 54)}, {HostTensor::Zeros(DType::kFloat32, {6, 1})});
      },
      kReordered);
  // Few outputs over many strided elements: a block per output.
  ExpectSame(
      [] {
        return KernelHarness("reduce_sum", {IntsAttribute("axes", {0, 2})},
                             {RandomFloats({301, 7, 299}, 55)},
                             {HostTensor::Zeros(DType::kFloat32, {7})});
      },
      kReordered);
}

TEST_F(CudaKernelsGpuTest, AccumulateAndTheOptimizerUpdatesOverSeveralStepsMatchTheCpu) {
  const int64_t n = 3000;
  ExpectSame(
      [&] {
        return KernelHarness("accumulate", {}, {RandomFloats({n}, 60)},
                             {HostTensor::Zeros(DType::kFloat32, {n})});
      },
      kExact, 5);
  ExpectSame(
      [&] {
        return KernelHarness("sgd_update",
                             {FloatAttribute("learning_rate", 0.1), FloatAttribute("momentum", 0.9),
                              FloatAttribute("weight_decay", 0.01)},
                             {RandomFloats({n}, 61), RandomFloats({n}, 62)}, {});
      },
      kExact, 5, n * 4);
  ExpectSame(
      [&] {
        return KernelHarness(
            "adam_update",
            {FloatAttribute("learning_rate", 0.01), FloatAttribute("weight_decay", 0.01)},
            {RandomFloats({n}, 63), RandomFloats({n}, 64)}, {});
      },
      kReordered, 5, 2 * n * 4);
}

TEST_F(CudaKernelsGpuTest, SyntheticSourceDrawsTheHostsValuesOnTheDevice) {
  // Samples [5, 300) of micro-batches of 512, 37 floats and a label each; four firings, the
  // last (piece 3) compared. Labels bit for bit; normals as floats (CUDA's double log and cos
  // are within an ulp or two of glibc's: the floats are equal in practice), and counted.
  const auto make = [] {
    KernelHarness harness("source", {}, {},
                          {HostTensor::Zeros(DType::kFloat32, Shape({295, 37})),
                           HostTensor::Zeros(DType::kInt32, Shape({295}))});
    harness.plan().mutable_schedule()->set_micro_batch_size(512);
    harness.actor().set_kind(proto::ACTOR_KIND_SOURCE);
    proto::DataSource* dataset = harness.actor().mutable_source()->mutable_dataset();
    dataset->set_name("synthetic");
    proto::SourceOutput* x = dataset->add_output();
    x->set_name("x");
    x->set_dtype(proto::DATA_TYPE_FLOAT32);
    x->add_sample_dims(37);
    proto::SourceOutput* label = dataset->add_output();
    label->set_name("label");
    label->set_dtype(proto::DATA_TYPE_INT32);
    dataset->mutable_synthetic()->set_seed(7);
    dataset->mutable_synthetic()->set_int_high(1000);
    harness.actor().mutable_source()->set_sample_begin(5);
    harness.actor().mutable_source()->set_sample_end(300);
    return harness;
  };
  ExpectSame(make, kExact, /*firings=*/4);
  KernelHarness on_cpu = make();
  KernelHarness on_cuda = make();
  ASSERT_TRUE(on_cpu.Create(cpu_).ok());
  SerialRunner runner;
  ASSERT_TRUE(on_cpu.Run(&runner, 3, 3, {true, true}).ok());
  ASSERT_TRUE(RunOnCuda(device_.get(), cuda_, &on_cuda, 4).ok());
  int64_t floats_differing = 0;
  for (size_t i = 0; i < on_cpu.output(0).floats.size(); ++i) {
    floats_differing += on_cuda.output(0).floats[i] != on_cpu.output(0).floats[i];
  }
  std::cout << "synthetic normals: " << floats_differing << " of " << on_cpu.output(0).floats.size()
            << " floats differ from the host's\n";
  EXPECT_LE(floats_differing, 2);
  EXPECT_EQ(on_cuda.output(1).ints, on_cpu.output(1).ints);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
