// reduce_sum, reduce_mean and sum_to_shape against the reference. Every output is a sum of
// float32 terms: SumTolerance(terms) against sum |terms| (the reference op on |x|), whatever
// order the kernel adds them in (row runs of 16 lanes, element-wise row additions, or fixed
// blocks for a total sum).
#include <gtest/gtest.h>

#include "runtime/kernels/testing/threaded_test_runner.h"
#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

struct ReduceCase {
  Shape x;
  std::vector<int64_t> axes;  // Empty: every axis.
  bool keepdims;
  Shape y;
};

TEST(ReductionKernels, ReduceSumAndReduceMeanMatchTheReferenceForEveryAxisPattern) {
  const std::vector<ReduceCase> cases = {
      {Shape({4, 5, 6}), {}, false, Shape()},           // Total.
      {Shape({4, 5, 6}), {0}, false, Shape({5, 6})},    // Leading.
      {Shape({4, 5, 6}), {-1}, false, Shape({4, 5})},   // Trailing.
      {Shape({4, 5, 6}), {1}, true, Shape({4, 1, 6})},  // Middle, kept.
      {Shape({4, 5, 6}), {0, 2}, false, Shape({5})},    // Alternating.
      {Shape({3, 1, 4, 2}), {1, 3}, true, Shape({3, 1, 4, 1})},
      {Shape({7}), {0}, true, Shape({1})},
      {Shape(), {}, false, Shape()},                  // A scalar.
      {Shape({300, 400}), {}, false, Shape()},        // Total, blocks in parallel.
      {Shape({3000, 64}), {0}, false, Shape({64})},   // Columns in parallel.
      {Shape({64, 3000}), {1}, false, Shape({64})},   // Rows in parallel.
      {Shape({2, 0, 3}), {1}, false, Shape({2, 3})},  // Empty reduced axis.
  };
  for (const ReduceCase& c : cases) {
    const int64_t terms = c.y.NumElements() == 0 ? 0 : c.x.NumElements() / c.y.NumElements();
    for (const std::string op_type : {"reduce_sum", "reduce_mean"}) {
      if (op_type == "reduce_mean" && terms == 0) continue;  // 0 / 0.
      SCOPED_TRACE(op_type + " " + c.x.ToString() + " axes " + Shape(c.axes).ToString());
      std::vector<proto::Attribute> attributes = {BoolAttribute("keepdims", c.keepdims)};
      if (!c.axes.empty()) attributes.push_back(IntsAttribute("axes", c.axes));
      ExpectCpuMatchesReferenceOnEveryRunner({op_type, attributes, {RandomFloats(c.x, 1)}, {c.y}},
                                             SumTolerance(terms));
    }
  }
}

TEST(ReductionKernels, ATotalSumIsSplitIntoBlocksAcrossThreads) {
  OpCase op{"reduce_sum", {}, {RandomFloats(Shape({300, 400}), 2)}, {Shape()}};
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(op, SumTolerance(120000)), 0);
}

TEST(ReductionKernels, ATotalSumDoesNotDependOnTheThreadCount) {
  OpCase op{"reduce_sum", {}, {RandomFloats(Shape({300, 400}), 3)}, {Shape()}};
  runtime::SerialRunner serial;
  runtime::ThreadedTestRunner uneven(3, runtime::ThreadedTestRunner::Split::kUneven);
  EXPECT_EQ(RunCpu(op, &serial)[0].floats[0], RunCpu(op, &uneven)[0].floats[0]);
}

TEST(SumToShapeKernel, ReducesBroadcastAxesBackToTheShape) {
  struct Case {
    Shape x;
    Shape y;
  };
  for (const Case& c :
       {Case{Shape({4, 3, 5}), Shape({3, 1})}, Case{Shape({4, 3, 5}), Shape({1, 5})},
        Case{Shape({4, 3, 5}), Shape()}, Case{Shape({4, 3, 5}), Shape({4, 3, 5})},
        Case{Shape({300, 257}), Shape({257})}, Case{Shape({2, 6, 1, 7}), Shape({6, 1, 1})}}) {
    SCOPED_TRACE(c.x.ToString() + " -> " + c.y.ToString());
    const int64_t terms = c.x.NumElements() / c.y.NumElements();
    ExpectCpuMatchesReferenceOnEveryRunner(
        {"sum_to_shape", {IntsAttribute("shape", c.y.dims())}, {RandomFloats(c.x, 4)}, {c.y}},
        SumTolerance(terms));
  }
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
