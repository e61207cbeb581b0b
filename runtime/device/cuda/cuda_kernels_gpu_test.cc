// Every cuda kernel of the products, the element-wise ops, the reductions, the optimizer updates
// and the synthetic source against its cpu kernel on the same random inputs
// (cuda_kernels_gpu_test_util.h: the comparison and its tolerances; the transformer's kernels are
// in cuda_transformer_kernels_gpu_test.cc). Skips without a GPU, saying why.
#include <cstdint>
#include <iostream>

#include "runtime/device/cuda/cuda_kernels_gpu_test_util.h"

namespace softwire {
namespace runtime {
namespace {

using testing::CudaKernelsGpuTest;
using testing::kExact;
using testing::kReordered;
using testing::Labels;
using testing::Random;
using testing::RandomFloats;

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
