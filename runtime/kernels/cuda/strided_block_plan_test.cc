// The walks transpose, slice and assemble's cuda kernels plan (strided_block_plan.h), checked
// without a GPU: element i of each planned block must be where the cpu kernel, run on an input
// that holds its own indices, put or took element i.
#include "runtime/kernels/cuda/strided_block_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/kernel_harness.h"

namespace softwire {
namespace runtime {
namespace {

using ::testing::HasSubstr;

// An int32 tensor whose element i is i.
HostTensor Indices(const Shape& shape) {
  std::vector<int32_t> values(static_cast<size_t>(shape.NumElements()));
  std::iota(values.begin(), values.end(), 0);
  return HostTensor::Int(shape, values);
}

// The planned offsets of every element of `block`.
std::vector<int32_t> Walk(const cuda::StridedBlock& block) {
  std::vector<int32_t> offsets;
  for (int64_t i = 0; i < block.count; ++i) {
    offsets.push_back(static_cast<int32_t>(StridedBlockOffset(block, i)));
  }
  return offsets;
}

class StridedBlockPlanTest : public ::testing::Test {
 protected:
  StridedBlockPlanTest() { RegisterCpuKernels(&cpu_); }

  // The cpu kernel's output 0 for `harness`.
  std::vector<int32_t> RunOnCpu(KernelHarness harness) {
    EXPECT_TRUE(harness.Create(cpu_).ok());
    SerialRunner runner;
    EXPECT_TRUE(harness.Run(&runner).ok());
    return harness.output(0).ints;
  }

  KernelRegistry cpu_;
};

TEST_F(StridedBlockPlanTest, ATransposeWalksTheInputInTheOrderTheCpuKernelWritesTheOutput) {
  const Shape x({3, 5, 1, 7, 4});
  for (const std::vector<int64_t>& perm : std::vector<std::vector<int64_t>>{
           {0, 3, 2, 1, 4}, {4, 3, 2, 1, 0}, {0, 1, 2, 3, 4}, {2, 0, 1, 4, 3}, {1, 2, 3, 0, 4}}) {
    std::vector<int64_t> y;
    for (int64_t axis : perm) y.push_back(x.dim(static_cast<int>(axis)));
    StatusOr<cuda::StridedBlock> block = PlanTranspose(x, perm);
    ASSERT_TRUE(block.ok()) << block.status().ToString();
    EXPECT_EQ(Walk(*block),
              RunOnCpu(KernelHarness("transpose", {IntsAttribute("perm", perm)}, {Indices(x)},
                                     {HostTensor::Zeros(DType::kInt32, Shape(y))})))
        << Shape(perm).ToString();
  }
}

TEST_F(StridedBlockPlanTest, ASliceWalksTheElementsTheCpuKernelCopiesAndMergesWholeAxes) {
  const Shape x({4, 6, 5});
  StatusOr<cuda::StridedBlock> block = PlanSlice(x, {1, 0, 2}, {3, 6, 4});
  ASSERT_TRUE(block.ok());
  EXPECT_EQ(Walk(*block),
            RunOnCpu(KernelHarness(
                "slice", {IntsAttribute("begin", {1, 0, 2}), IntsAttribute("end", {3, 6, 4})},
                {Indices(x)}, {HostTensor::Zeros(DType::kInt32, {2, 6, 2})})));
  EXPECT_EQ(block->rank, 2);  // Axes 0 and 1 step evenly: one axis of 12.
  StatusOr<cuda::StridedBlock> rows = PlanSlice(x, {1, 0, 0}, {3, 6, 5});
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->rank, 1);  // Whole rows: one contiguous run.
  EXPECT_EQ(Walk(*rows).front(), 30);
}

TEST_F(StridedBlockPlanTest, AnAssembledBlockLandsWhereTheCpuKernelAddsIt) {
  // y [5, 6] = 0 + block [3, 4] of ones at (2, 1): the cpu output marks the walked elements.
  StatusOr<cuda::StridedBlock> block = PlanBlockIn(Shape({5, 6}), Shape({3, 4}), {2, 1});
  ASSERT_TRUE(block.ok());
  std::vector<int32_t> y = RunOnCpu(
      KernelHarness("assemble", {IntsAttribute("shape", {5, 6}), IntsAttribute("offsets", {2, 1})},
                    {HostTensor::Int({3, 4}, std::vector<int32_t>(12, 1))},
                    {HostTensor::Zeros(DType::kInt32, {5, 6})}));
  std::vector<int32_t> marked(30, 0);
  for (int32_t offset : Walk(*block)) marked[static_cast<size_t>(offset)] += 1;
  EXPECT_EQ(marked, y);
}

TEST_F(StridedBlockPlanTest, MoreThanEightUnmergeableAxesAreRefusedNamingTheOp) {
  const Shape x({2, 2, 2, 2, 2, 2, 2, 2, 2});
  StatusOr<cuda::StridedBlock> block = PlanTranspose(x, {8, 7, 6, 5, 4, 3, 2, 1, 0});
  ASSERT_FALSE(block.ok());
  EXPECT_EQ(block.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(block.status().message(), HasSubstr("transpose"));
  EXPECT_TRUE(PlanTranspose(x, {0, 1, 2, 3, 4, 5, 6, 7, 8}).ok());  // Merges to one axis.
}

TEST_F(StridedBlockPlanTest, AnEmptyBlockWalksNothing) {
  StatusOr<cuda::StridedBlock> block = PlanTranspose(Shape({0, 3}), {1, 0});
  ASSERT_TRUE(block.ok());
  EXPECT_EQ(block->count, 0);
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
