// What the cuda kernel registry decides without a GPU: which ops it covers (printed against the
// cpu registry), that it checks KernelDefs exactly as the cpu kernels do, and that an op it
// lacks is refused when the kernel is created (at load), not when it would run.
#include "runtime/kernels/cuda/cuda_kernels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

TEST_F(CudaKernelsTest, CoversEveryOpOfTheMlpAndTheTransformersProductsAndSoftmax) {
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
                         "mul"}) {
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

TEST_F(CudaKernelsTest, StridedBatchMatmulViewsAreRefusedAtCreationNotAtRun) {
  KernelHarness harness("batch_matmul", {IntsAttribute("a_perm", {1, 0, 2})},
                        {HostTensor::Zeros(DType::kFloat32, {2, 3, 4}),
                         HostTensor::Zeros(DType::kFloat32, {2, 4, 5})},
                        {HostTensor::Zeros(DType::kFloat32, {2, 3, 5})});
  Status created = harness.Create(cuda_);
  EXPECT_EQ(created.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(created.message(), HasSubstr("a_perm"));
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
