// Every cuda kernel against its cpu kernel on the same random inputs: forward ops and their
// gradients, the optimizer updates over several steps. Skips without a GPU, saying why.
//
// Tolerance: ||cuda - cpu|| / ||cpu|| (L2 over the output) at most 1e-6 for ops that compute
// each element the same way (relu, bias_add, fill, copies, add_n, updates: FMA contraction may
// differ by an ulp), and 1e-5 for sums in another order and expf (matmul with TF32 off,
// reductions, softmax, cross entropy, gelu, layer_norm). A NaN or an infinity passes only where
// the cpu has the same. int32 and bfloat16
// outputs (transpose, slice, assemble, casts) must equal the cpu's bit for bit.
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

std::vector<uint16_t> Bits(const std::vector<BFloat16>& values) {
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

TEST_F(CudaKernelsGpuTest, LayerNormAndItsGradientMatchTheCpuOnRowsLongerAndShorterThanAWarp) {
  for (int64_t channels : {130, 5, 128}) {
    const Shape x({3, 37, channels});
    ExpectSame(
        [&] {
          return KernelHarness("layer_norm", {},
                               {RandomFloats(x, 70, -3, 5), RandomFloats({channels}, 71),
                                RandomFloats({channels}, 72)},
                               {HostTensor::Zeros(DType::kFloat32, x)});
        },
        kReordered);
    ExpectSame(
        [&] {
          return KernelHarness(
              "layer_norm_grad", {FloatAttribute("epsilon", 1e-3)},
              {RandomFloats(x, 73), RandomFloats(x, 74, -3, 5), RandomFloats({channels}, 75)},
              {HostTensor::Zeros(DType::kFloat32, x),
               HostTensor::Zeros(DType::kFloat32, {channels}),
               HostTensor::Zeros(DType::kFloat32, {channels})});
        },
        kReordered);
  }
}

HostTensor Ids(Shape shape, int32_t low, int32_t high, uint32_t seed) {
  std::mt19937 generator(seed);
  std::vector<int32_t> ids(static_cast<size_t>(shape.NumElements()));
  for (int32_t& id : ids) id = low + static_cast<int32_t>(generator() % (high - low));
  return HostTensor::Int(shape, ids);
}

TEST_F(CudaKernelsGpuTest, EmbeddingAndItsGradientMatchTheCpuBitForBitAndRunToRun) {
  // 5 x 37 lookups into 61 rows: most rows are hit several times.
  auto lookup = [] {
    return KernelHarness("embedding", {}, {RandomFloats({61, 45}, 80), Ids({5, 37}, 0, 61, 81)},
                         {HostTensor::Zeros(DType::kFloat32, {5, 37, 45})});
  };
  auto gradient = [] {
    return KernelHarness("embedding_grad", {IntAttribute("num_embeddings", 61)},
                         {RandomFloats({5, 37, 45}, 82), Ids({5, 37}, 0, 61, 83)},
                         {HostTensor::Zeros(DType::kFloat32, {61, 45})});
  };
  ExpectSame(lookup, 0.0);
  ExpectSame(gradient, 0.0);  // Id order, as on the cpu.
  ExpectTheSameBitsEveryRun(gradient);
  // A part of a table split on axis 0: rows [20, 50); other ids are zero rows and skipped.
  ExpectSame(
      [] {
        return KernelHarness("embedding",
                             {IntAttribute("index_begin", 20), BoolAttribute("partial", true)},
                             {RandomFloats({30, 45}, 84), Ids({5, 37}, 0, 61, 85)},
                             {HostTensor::Zeros(DType::kFloat32, {5, 37, 45})});
      },
      0.0);
  ExpectSame(
      [] {
        return KernelHarness("embedding_grad",
                             {IntAttribute("num_embeddings", 30), IntAttribute("index_begin", 20),
                              BoolAttribute("partial", true)},
                             {RandomFloats({5, 37, 45}, 86), Ids({5, 37}, 0, 61, 87)},
                             {HostTensor::Zeros(DType::kFloat32, {30, 45})});
      },
      0.0);
}

TEST_F(CudaKernelsGpuTest, TransposesOfFloatsAndIntsMatchTheCpuBitForBit) {
  const Shape x({3, 5, 7, 9});
  for (const std::vector<int64_t>& perm :
       std::vector<std::vector<int64_t>>{{0, 2, 1, 3}, {3, 1, 0, 2}, {0, 1, 3, 2}, {2, 3, 0, 1}}) {
    std::vector<int64_t> y_dims;
    for (int64_t axis : perm) y_dims.push_back(x.dim(static_cast<int>(axis)));
    ExpectSame(
        [&] {
          return KernelHarness("transpose", {IntsAttribute("perm", perm)}, {RandomFloats(x, 90)},
                               {HostTensor::Zeros(DType::kFloat32, Shape(y_dims))});
        },
        0.0);
    ExpectSame(
        [&] {
          return KernelHarness("transpose", {IntsAttribute("perm", perm)}, {Ids(x, -50, 50, 91)},
                               {HostTensor::Zeros(DType::kInt32, Shape(y_dims))});
        },
        0.0);
  }
}

TEST_F(CudaKernelsGpuTest, SliceAssembleAndTheFlatOpsMatchTheCpuBitForBit) {
  ExpectSame(
      [] {
        return KernelHarness(
            "slice", {IntsAttribute("begin", {1, 0, 2}), IntsAttribute("end", {4, 5, 9})},
            {RandomFloats({5, 5, 11}, 100)}, {HostTensor::Zeros(DType::kFloat32, {3, 5, 7})});
      },
      0.0);
  ExpectSame(
      [] {
        return KernelHarness("slice",
                             {IntsAttribute("begin", {2, 3}), IntsAttribute("end", {5, 4})},
                             {HostTensor::BFloat16s({7, 6}, Random(42, 101))},
                             {HostTensor::Zeros(DType::kBFloat16, {3, 1})});
      },
      0.0);
  // Two blocks that overlap in one column: added in input order.
  ExpectSame(
      [] {
        return KernelHarness(
            "assemble", {IntsAttribute("shape", {6, 9}), IntsAttribute("offsets", {0, 0, 1, 4})},
            {RandomFloats({6, 5}, 102), RandomFloats({5, 5}, 103)},
            {HostTensor::Zeros(DType::kFloat32, {6, 9})});
      },
      0.0);
  ExpectSame(
      [] {
        return KernelHarness(
            "assemble", {IntsAttribute("shape", {4, 7}), IntsAttribute("offsets", {0, 0, 2, 0})},
            {Ids({2, 7}, -9, 9, 104), Ids({2, 7}, -9, 9, 105)},
            {HostTensor::Zeros(DType::kInt32, {4, 7})});
      },
      0.0);
  ExpectSame(
      [] {
        return KernelHarness(
            "assemble", {IntsAttribute("shape", {3, 8}), IntsAttribute("offsets", {0, 0, 0, 3})},
            {HostTensor::BFloat16s({3, 3}, Random(9, 106)),
             HostTensor::BFloat16s({3, 5}, Random(15, 107))},
            {HostTensor::Zeros(DType::kBFloat16, {3, 8})});
      },
      0.0);
  ExpectSame(
      [] {
        return KernelHarness(
            "flat_split", {IntsAttribute("sizes", {7, 4, 19})}, {RandomFloats({5, 6}, 108)},
            {HostTensor::Zeros(DType::kFloat32, {7}), HostTensor::Zeros(DType::kFloat32, {4}),
             HostTensor::Zeros(DType::kFloat32, {19})});
      },
      0.0);
  ExpectSame(
      [] {
        return KernelHarness("flat_concat", {IntsAttribute("shape", {3, 4})},
                             {Ids({5}, 0, 9, 109), Ids({7}, 0, 9, 110)},
                             {HostTensor::Zeros(DType::kInt32, {3, 4})});
      },
      0.0);
}

TEST_F(CudaKernelsGpuTest, CastsBetweenFloat32AndBFloat16MatchTheCpuBitForBit) {
  std::vector<float> values = Random(997, 120, -1000, 1000);
  values[0] = NAN;
  values[1] = INFINITY;
  values[2] = 3.4e38f;      // Rounds to infinity.
  values[3] = 1.00390625f;  // A tie: rounds to even.
  ExpectSame(
      [&] {
        return KernelHarness("cast", {StringAttribute("dtype", "bfloat16")},
                             {HostTensor::Float({997}, values)},
                             {HostTensor::Zeros(DType::kBFloat16, {997})});
      },
      0.0);
  ExpectSame(
      [] {
        return KernelHarness("cast", {StringAttribute("dtype", "float32")},
                             {HostTensor::BFloat16s({31, 3}, Random(93, 121))},
                             {HostTensor::Zeros(DType::kFloat32, {31, 3})});
      },
      0.0);
  ExpectSame(
      [] {
        return KernelHarness("cast", {StringAttribute("dtype", "float32")},
                             {RandomFloats({17}, 122)}, {HostTensor::Zeros(DType::kFloat32, {17})});
      },
      0.0);
}

TEST_F(CudaKernelsGpuTest, AccuracyAndSumToShapeMatchTheCpu) {
  // Logits in steps of 0.5 in [-2, 2): ties, which the first maximum decides.
  std::vector<float> logits = Random(777 * 11, 130);
  for (float& value : logits) value = std::floor(value * 2) / 2;
  ExpectSame(
      [&] {
        return KernelHarness("accuracy", {},
                             {HostTensor::Float({777, 11}, logits), Labels(777, 11, 131)},
                             {HostTensor::Zeros(DType::kFloat32, {})});
      },
      0.0);
  ExpectSame(
      [&] {
        return KernelHarness("accuracy", {IntAttribute("divisor", 2000)},
                             {HostTensor::Float({777, 11}, logits), Labels(777, 11, 132)},
                             {HostTensor::Zeros(DType::kFloat32, {})});
      },
      0.0);
  ExpectSame(
      [] {
        return KernelHarness("sum_to_shape", {IntsAttribute("shape", {7, 1, 9})},
                             {RandomFloats({4, 7, 6, 9}, 133)},
                             {HostTensor::Zeros(DType::kFloat32, {7, 1, 9})});
      },
      kReordered);
}

TEST_F(CudaKernelsGpuTest, BatchMatmulReadsTheTransformersStridedViewsAsTheCpuDoes) {
  // q [B, H, T, D] read from [B, T, H, D] (a_perm), k likewise (b_perm), k transposed.
  const std::vector<int64_t> heads = {0, 2, 1, 3};
  ExpectSame(
      [&] {
        return KernelHarness("batch_matmul",
                             {BoolAttribute("transpose_b", true), IntsAttribute("a_perm", heads),
                              IntsAttribute("b_perm", heads)},
                             {RandomFloats({3, 4, 17, 8}, 140), RandomFloats({3, 4, 17, 8}, 141)},
                             {HostTensor::Zeros(DType::kFloat32, {3, 4, 17, 17})});
      },
      kReordered);
  // attention [B, H, T, T] (dense) times v read strided; and a view of a with transpose_a.
  ExpectSame(
      [&] {
        return KernelHarness("batch_matmul", {IntsAttribute("b_perm", heads)},
                             {RandomFloats({3, 4, 17, 17}, 142), RandomFloats({3, 4, 17, 8}, 143)},
                             {HostTensor::Zeros(DType::kFloat32, {3, 4, 17, 8})});
      },
      kReordered);
  ExpectSame(
      [&] {
        return KernelHarness("batch_matmul",
                             {BoolAttribute("transpose_a", true), IntsAttribute("a_perm", heads)},
                             {RandomFloats({3, 4, 17, 8}, 144), RandomFloats({3, 4, 17, 6}, 145)},
                             {HostTensor::Zeros(DType::kFloat32, {3, 4, 8, 6})});
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
