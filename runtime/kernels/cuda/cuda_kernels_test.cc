// What the cuda kernel registry decides without a GPU: which ops it covers (printed against the
// cpu registry), that it checks KernelDefs exactly as the cpu kernels do, and that an op it
// lacks is refused when the kernel is created (at load), not when it would run.
#include "runtime/kernels/cuda/cuda_kernels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <iostream>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/kernel_harness.h"

namespace softwire {
namespace runtime {
namespace {

using ::testing::HasSubstr;

class CudaKernelsTest : public ::testing::Test {
 protected:
  CudaKernelsTest() {
    RegisterCudaKernels(&cuda_);
    RegisterCpuKernels(&cpu_);
  }

  KernelRegistry cuda_;
  KernelRegistry cpu_;
};

TEST_F(CudaKernelsTest, CoversEveryOpOfTheMlpTheTransformerAndBoxing) {
  for (const char* op : {"matmul",
                         "batch_matmul",
                         "bias_add",
                         "bias_add_grad",
                         "relu",
                         "relu_grad",
                         "softmax_cross_entropy",
                         "softmax_cross_entropy_grad",
                         "reduce_mean",
                         "reduce_sum",
                         "fill",
                         "add",
                         "add_n",
                         "scale",
                         "sgd_update",
                         "adam_update",
                         "accumulate",
                         "copy",
                         "identity",
                         "reshape",
                         "gelu",
                         "gelu_grad",
                         "softmax",
                         "softmax_grad",
                         "sub",
                         "mul",
                         "layer_norm",
                         "layer_norm_grad",
                         "embedding",
                         "embedding_grad",
                         "transpose",
                         "slice",
                         "assemble",
                         "flat_split",
                         "flat_concat",
                         "cast",
                         "accuracy",
                         "sum_to_shape"}) {
    EXPECT_TRUE(cuda_.Contains(op)) << op;
  }
  std::vector<std::string> missing = OpsMissingOnCuda();
  std::cout << "cuda kernels: " << cuda_.OpTypes().size() << " of the cpu's "
            << cpu_.OpTypes().size() << " ops; missing on cuda (" << missing.size() << "):";
  for (const std::string& op : missing) std::cout << " " << op;
  std::cout << "\n";
  for (const std::string& op : cuda_.OpTypes()) EXPECT_TRUE(cpu_.Contains(op)) << op;
  EXPECT_EQ(missing.size() + cuda_.OpTypes().size(), cpu_.OpTypes().size());
}

TEST_F(CudaKernelsTest, RefusesABadKernelDefWithTheCpuKernelsOwnError) {
  auto bad_bias_add = [] {
    return KernelHarness(
        "bias_add", {},
        {HostTensor::Zeros(DType::kFloat32, {2, 4}), HostTensor::Zeros(DType::kFloat32, {3})},
        {HostTensor::Zeros(DType::kFloat32, {2, 4})});
  };
  KernelHarness cuda_side = bad_bias_add();
  KernelHarness cpu_side = bad_bias_add();
  Status on_cuda = cuda_side.Create(cuda_);
  Status on_cpu = cpu_side.Create(cpu_);
  ASSERT_FALSE(on_cuda.ok());
  EXPECT_EQ(on_cuda.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(on_cuda.message(), on_cpu.message());
  EXPECT_THAT(on_cuda.message(), HasSubstr("bias"));
}

TEST_F(CudaKernelsTest, CreatesTheKernelsOfValidDefsWithoutAGpu) {
  KernelHarness matmul(
      "matmul", {BoolAttribute("transpose_b", true)},
      {HostTensor::Zeros(DType::kFloat32, {4, 3}), HostTensor::Zeros(DType::kFloat32, {5, 3})},
      {HostTensor::Zeros(DType::kFloat32, {4, 5})});
  EXPECT_TRUE(matmul.Create(cuda_).ok());
  KernelHarness reduce("reduce_mean", {IntsAttribute("axes", {0})},
                       {HostTensor::Zeros(DType::kFloat32, {4, 3})},
                       {HostTensor::Zeros(DType::kFloat32, {3})});
  EXPECT_TRUE(reduce.Create(cuda_).ok());
}

TEST_F(CudaKernelsTest, AKernelCreatedForCudaRefusesToRunOnTheHost) {
  KernelHarness relu("relu", {}, {HostTensor::Float({2}, {1, -1})},
                     {HostTensor::Zeros(DType::kFloat32, {2})});
  ASSERT_TRUE(relu.Create(cuda_).ok());
  SerialRunner runner;
  Status run = relu.Run(&runner);
  EXPECT_EQ(run.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(run.message(), HasSubstr("cuda device's queue"));
}

TEST_F(CudaKernelsTest, AnOpWithoutACudaKernelIsRefusedWhenTheKernelIsCreatedNamingTheOp) {
  ASSERT_FALSE(OpsMissingOnCuda().empty());
  const std::string op = OpsMissingOnCuda().front();
  KernelHarness harness(op, {}, {}, {});
  Status created = harness.Create(cuda_);
  EXPECT_EQ(created.code(), StatusCode::kNotFound);
  EXPECT_THAT(created.message(), HasSubstr("'" + op + "'"));
}

TEST_F(CudaKernelsTest, CreatesStridedBatchMatmulViewsAndRefusesABadPermWithTheCpusError) {
  auto view = [](std::vector<int64_t> perm) {
    return KernelHarness("batch_matmul", {IntsAttribute("a_perm", perm)},
                         {HostTensor::Zeros(DType::kFloat32, {2, 3, 4, 5}),
                          HostTensor::Zeros(DType::kFloat32, {2, 3, 5, 6})},
                         {HostTensor::Zeros(DType::kFloat32, {2, 3, 4, 6})});
  };
  KernelHarness heads = view({0, 2, 1, 3});
  EXPECT_TRUE(heads.Create(cuda_).ok());
  KernelHarness on_cuda = view({0, 1, 3, 2});  // Moves the last axis: no cuda or cpu kernel.
  KernelHarness on_cpu = view({0, 1, 3, 2});
  Status refused = on_cuda.Create(cuda_);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.message(), on_cpu.Create(cpu_).message());
  EXPECT_THAT(refused.message(), HasSubstr("a_perm"));
}

// Each new family's kernels are created from valid defs and refuse bad ones with the cpu
// kernel's own message.
TEST_F(CudaKernelsTest, TheTransformersKernelsCheckTheirDefsAsTheCpuKernelsDo) {
  std::vector<std::function<KernelHarness()>> valid = {
      [] {
        return KernelHarness(
            "layer_norm", {},
            {HostTensor::Zeros(DType::kFloat32, {4, 3}), HostTensor::Zeros(DType::kFloat32, {3}),
             HostTensor::Zeros(DType::kFloat32, {3})},
            {HostTensor::Zeros(DType::kFloat32, {4, 3})});
      },
      [] {
        return KernelHarness(
            "embedding", {},
            {HostTensor::Zeros(DType::kFloat32, {10, 3}), HostTensor::Zeros(DType::kInt32, {2, 4})},
            {HostTensor::Zeros(DType::kFloat32, {2, 4, 3})});
      },
      [] {
        return KernelHarness("transpose", {IntsAttribute("perm", {1, 0})},
                             {HostTensor::Zeros(DType::kInt32, {2, 5})},
                             {HostTensor::Zeros(DType::kInt32, {5, 2})});
      },
      [] {
        return KernelHarness("cast", {StringAttribute("dtype", "bfloat16")},
                             {HostTensor::Zeros(DType::kFloat32, {6})},
                             {HostTensor::Zeros(DType::kBFloat16, {6})});
      },
      [] {
        return KernelHarness(
            "assemble", {IntsAttribute("shape", {4, 3}), IntsAttribute("offsets", {0, 0, 2, 0})},
            {HostTensor::Zeros(DType::kFloat32, {2, 3}),
             HostTensor::Zeros(DType::kFloat32, {2, 3})},
            {HostTensor::Zeros(DType::kFloat32, {4, 3})});
      },
  };
  for (const auto& make : valid) {
    KernelHarness harness = make();
    Status created = harness.Create(cuda_);
    EXPECT_TRUE(created.ok()) << harness.actor().kernel().op_type() << ": " << created.ToString();
  }
  std::vector<std::function<KernelHarness()>> invalid = {
      [] {  // gamma of the wrong length.
        return KernelHarness(
            "layer_norm", {},
            {HostTensor::Zeros(DType::kFloat32, {4, 3}), HostTensor::Zeros(DType::kFloat32, {2}),
             HostTensor::Zeros(DType::kFloat32, {3})},
            {HostTensor::Zeros(DType::kFloat32, {4, 3})});
      },
      [] {  // float ids.
        return KernelHarness("embedding", {},
                             {HostTensor::Zeros(DType::kFloat32, {10, 3}),
                              HostTensor::Zeros(DType::kFloat32, {2, 4})},
                             {HostTensor::Zeros(DType::kFloat32, {2, 4, 3})});
      },
      [] {  // Not a permutation.
        return KernelHarness("transpose", {IntsAttribute("perm", {1, 1})},
                             {HostTensor::Zeros(DType::kFloat32, {2, 5})},
                             {HostTensor::Zeros(DType::kFloat32, {5, 2})});
      },
      [] {  // first_firing_only on a widening cast.
        return KernelHarness(
            "cast", {StringAttribute("dtype", "float32"), BoolAttribute("first_firing_only", true)},
            {HostTensor::Zeros(DType::kBFloat16, {6})}, {HostTensor::Zeros(DType::kFloat32, {6})});
      },
      [] {  // A slice past the end.
        return KernelHarness("slice", {IntsAttribute("begin", {0}), IntsAttribute("end", {9})},
                             {HostTensor::Zeros(DType::kFloat32, {8})},
                             {HostTensor::Zeros(DType::kFloat32, {9})});
      },
      [] {  // Chunks that do not add up.
        return KernelHarness(
            "flat_split", {IntsAttribute("sizes", {3, 3})},
            {HostTensor::Zeros(DType::kFloat32, {7})},
            {HostTensor::Zeros(DType::kFloat32, {3}), HostTensor::Zeros(DType::kFloat32, {3})});
      },
  };
  for (const auto& make : invalid) {
    KernelHarness on_cuda = make();
    KernelHarness on_cpu = make();
    const std::string op = on_cuda.actor().kernel().op_type();
    Status refused = on_cuda.Create(cuda_);
    Status cpu_refused = on_cpu.Create(cpu_);
    ASSERT_FALSE(cpu_refused.ok()) << op;
    EXPECT_EQ(refused.code(), cpu_refused.code()) << op;
    EXPECT_EQ(refused.message(), cpu_refused.message()) << op;
  }
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
