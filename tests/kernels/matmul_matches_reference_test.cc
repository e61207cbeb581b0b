// matmul and batch_matmul (OpenBLAS sgemm) against the double-precision reference.
//
// Tolerance: a float32 dot product of K terms errs by at most about (K + 2) * 2^-24 times the
// sum of |a_k b_k| (SumTolerance(K)), in any summation order; OpenBLAS's blocked FMA order is
// typically far better, but the bound never flakes, and a wrong index or transpose is off by
// O(1) * sum |a_k b_k|, far outside it.
#include <gtest/gtest.h>

#include <thread>

#include "runtime/kernels/cpu/cpu_kernels.h"
#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

Shape Matrix(int64_t rows, int64_t columns, bool transpose) {
  return transpose ? Shape({columns, rows}) : Shape({rows, columns});
}

TEST(MatmulKernel, MatchesTheReferenceForEveryTransposeAtOddSizes) {
  const int64_t m = 37;
  const int64_t k = 53;
  const int64_t n = 29;
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      SCOPED_TRACE(std::to_string(transpose_a) + std::to_string(transpose_b));
      OpCase op{
          "matmul",
          {BoolAttribute("transpose_a", transpose_a), BoolAttribute("transpose_b", transpose_b)},
          {RandomFloats(Matrix(m, k, transpose_a), 1), RandomFloats(Matrix(k, n, transpose_b), 2)},
          {Shape({m, n})}};
      ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(k));
    }
  }
}

TEST(MatmulKernel, FlattensTheLeadingAxesOfAIntoRows) {
  OpCase op{"matmul",
            {BoolAttribute("transpose_b", true)},
            {RandomFloats(Shape({3, 5, 17}), 3), RandomFloats(Shape({11, 17}), 4)},
            {Shape({3, 5, 11})}};
  ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(17));
}

TEST(MatmulKernel, MatchesTheReferenceOnTheMlpsWeightGradientShape) {
  // dW1 = x^T dh1 of the MLP benchmark at a quarter of its batch.
  OpCase op{"matmul",
            {BoolAttribute("transpose_a", true)},
            {RandomFloats(Shape({64, 784}), 5), RandomFloats(Shape({64, 256}), 6)},
            {Shape({784, 256})}};
  runtime::SerialRunner serial;
  ExpectCpuMatchesReference(op, SumTolerance(64), &serial);
}

TEST(MatmulKernel, WritesZerosForAnEmptyInnerAxisAndHandlesSingleElements) {
  ExpectCpuMatchesReferenceOnEveryRunner(
      {"matmul",
       {},
       {RandomFloats(Shape({3, 0}), 7), RandomFloats(Shape({0, 4}), 8)},
       {Shape({3, 4})}},
      kRounding);
  ExpectCpuMatchesReferenceOnEveryRunner(
      {"matmul",
       {},
       {RandomFloats(Shape({1, 1}), 9), RandomFloats(Shape({1, 1}), 10)},
       {Shape({1, 1})}},
      kRounding);
}

TEST(BatchMatmulKernel, MatchesTheReferenceForEveryTranspose) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      SCOPED_TRACE(std::to_string(transpose_a) + std::to_string(transpose_b));
      Shape a = transpose_a ? Shape({2, 3, 13, 7}) : Shape({2, 3, 7, 13});
      Shape b = transpose_b ? Shape({2, 3, 5, 13}) : Shape({2, 3, 13, 5});
      OpCase op{
          "batch_matmul",
          {BoolAttribute("transpose_a", transpose_a), BoolAttribute("transpose_b", transpose_b)},
          {RandomFloats(a, 11), RandomFloats(b, 12)},
          {Shape({2, 3, 7, 5})}};
      ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(13));
    }
  }
}

// With OpenBLAS single-threaded, matmul cuts large products into bands of rows (or columns)
// over the runner's threads; every transpose and both band directions must still agree.
class SingleThreadedBlas : public ::testing::Test {
 protected:
  SingleThreadedBlas() { runtime::SetBlasThreads(1); }
  ~SingleThreadedBlas() override {
    runtime::SetBlasThreads(std::max(1u, std::thread::hardware_concurrency()));
  }
};

// Strided views (a_perm, b_perm): each input is transpose(x, perm) of the tensor its bytes
// hold, the last axis kept last, as fold_views reads attention's heads without a copy. The
// reference gathers the values explicitly; compiler_views_test checks it against a transpose.
TEST(BatchMatmulKernel, ReadsStridedViewsForEveryTranspose) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      SCOPED_TRACE(std::to_string(transpose_a) + std::to_string(transpose_b));
      Shape a = transpose_a ? Shape({2, 3, 13, 7}) : Shape({2, 3, 7, 13});
      Shape b = transpose_b ? Shape({2, 3, 5, 13}) : Shape({2, 3, 13, 5});
      OpCase op{
          "batch_matmul",
          {BoolAttribute("transpose_a", transpose_a), BoolAttribute("transpose_b", transpose_b),
           IntsAttribute("a_perm", {0, 2, 1, 3}), IntsAttribute("b_perm", {2, 0, 1, 3})},
          {RandomFloats(a, 21), RandomFloats(b, 22)},
          {Shape({2, 3, 7, 5})}};
      ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(13));
    }
  }
}

TEST_F(SingleThreadedBlas, SplitsALargeStridedProductIntoBandsOverTheRunner) {
  OpCase op{"batch_matmul",
            {BoolAttribute("transpose_b", true), IntsAttribute("a_perm", {1, 0, 2}),
             IntsAttribute("b_perm", {1, 0, 2})},
            {RandomFloats(Shape({2, 131, 67}), 23), RandomFloats(Shape({2, 40, 67}), 24)},
            {Shape({2, 131, 40})}};
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(67)), 0);
}

TEST(BatchMatmulKernel, SpreadsManySmallProductsOverThreads) {
  // 256 products of 8 x 8 x 8: too small for OpenBLAS threads, so the kernel splits the batch.
  OpCase op{"batch_matmul",
            {BoolAttribute("transpose_b", true)},
            {RandomFloats(Shape({16, 16, 8, 8}), 13), RandomFloats(Shape({16, 16, 8, 8}), 14)},
            {Shape({16, 16, 8, 8})}};
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(8)), 0);
}

TEST(BatchMatmulKernel, LeavesLargeProductsToAMultiThreadedOpenBlas) {
  runtime::SetBlasThreads(2);
  OpCase op{"batch_matmul",
            {},
            {RandomFloats(Shape({2, 70, 80}), 15), RandomFloats(Shape({2, 80, 90}), 16)},
            {Shape({2, 70, 90})}};
  EXPECT_EQ(ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(80)), 0);
  runtime::SetBlasThreads(std::max(1u, std::thread::hardware_concurrency()));
}

TEST_F(SingleThreadedBlas, MatmulSplitsLargeProductsIntoBandsOverTheRunner) {
  struct Case {
    int64_t m;
    int64_t k;
    int64_t n;
  };
  // Tall (bands of rows, a last band of 3 rows) and wide (bands of columns).
  for (const Case& c : {Case{131, 67, 40}, Case{40, 67, 131}}) {
    for (bool transpose_a : {false, true}) {
      for (bool transpose_b : {false, true}) {
        SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + " " +
                     std::to_string(transpose_a) + std::to_string(transpose_b));
        OpCase op{
            "matmul",
            {BoolAttribute("transpose_a", transpose_a), BoolAttribute("transpose_b", transpose_b)},
            {RandomFloats(Matrix(c.m, c.k, transpose_a), 17),
             RandomFloats(Matrix(c.k, c.n, transpose_b), 18)},
            {Shape({c.m, c.n})}};
        EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(c.k)), 0);
      }
    }
  }
}

TEST_F(SingleThreadedBlas, BatchMatmulSplitsEachLargeProductOverTheRunner) {
  OpCase op{"batch_matmul",
            {BoolAttribute("transpose_a", true)},
            {RandomFloats(Shape({2, 80, 70}), 19), RandomFloats(Shape({2, 80, 90}), 20)},
            {Shape({2, 70, 90})}};
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(80)), 0);
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
