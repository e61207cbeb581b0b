// batch_matmul's plan for cuBLAS (batched_product_plan.h), checked without a GPU: the products
// the plan describes (every call, every product of its batch, with its leading dimensions) are
// computed here naively and compared with the cpu kernel's output, for dense inputs and for the
// transformer's strided views.
#include "runtime/kernels/cuda/batched_product_plan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "proto/kernel_attributes.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "runtime/kernels/testing/kernel_harness.h"

namespace softwire {
namespace runtime {
namespace {

HostTensor RandomFloats(const Shape& shape, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> values(static_cast<size_t>(shape.NumElements()));
  for (float& value : values) value = uniform(generator);
  return HostTensor::Float(shape, values);
}

struct Case {
  Shape a;
  Shape b;
  bool transpose_a = false;
  bool transpose_b = false;
  std::vector<int64_t> a_perm;
  std::vector<int64_t> b_perm;
  size_t calls = 0;  // What the plan should need.
};

// c as the plan's calls would compute it (NaN where no call writes).
std::vector<float> ComputeByPlan(const BatchedProductPlan& plan, const Case& test, int64_t m,
                                 int64_t n, int64_t k, const std::vector<float>& a,
                                 const std::vector<float>& b, int64_t c_elements) {
  std::vector<float> c(static_cast<size_t>(c_elements), NAN);
  for (const ProductCall& call : plan.calls) {
    for (int64_t j = 0; j < plan.batch; ++j) {
      const float* a_matrix = a.data() + call.a_offset + j * plan.a_stride;
      const float* b_matrix = b.data() + call.b_offset + j * plan.b_stride;
      float* c_matrix = c.data() + call.c_offset + j * plan.c_stride;
      for (int64_t row = 0; row < m; ++row) {
        for (int64_t column = 0; column < n; ++column) {
          double sum = 0;
          for (int64_t inner = 0; inner < k; ++inner) {
            const float x = test.transpose_a ? a_matrix[inner * plan.lda + row]
                                             : a_matrix[row * plan.lda + inner];
            const float y = test.transpose_b ? b_matrix[column * plan.ldb + inner]
                                             : b_matrix[inner * plan.ldb + column];
            sum += double(x) * y;
          }
          c_matrix[row * n + column] = static_cast<float>(sum);
        }
      }
    }
  }
  return c;
}

void ExpectThePlanComputesWhatTheCpuKernelDoes(const Case& test) {
  const Shape& a = test.a;
  const Shape& b = test.b;
  const int64_t m = test.transpose_a ? a.dim(-1) : a.dim(-2);
  const int64_t k = test.transpose_a ? a.dim(-2) : a.dim(-1);
  const int64_t n = test.transpose_b ? b.dim(-2) : b.dim(-1);
  std::vector<int64_t> c_dims(a.dims().begin(), a.dims().end() - 2);
  c_dims.push_back(m);
  c_dims.push_back(n);
  std::vector<proto::Attribute> attributes = {BoolAttribute("transpose_a", test.transpose_a),
                                              BoolAttribute("transpose_b", test.transpose_b)};
  if (!test.a_perm.empty()) attributes.push_back(IntsAttribute("a_perm", test.a_perm));
  if (!test.b_perm.empty()) attributes.push_back(IntsAttribute("b_perm", test.b_perm));
  KernelHarness harness("batch_matmul", attributes, {RandomFloats(a, 1), RandomFloats(b, 2)},
                        {HostTensor::Zeros(DType::kFloat32, Shape(c_dims))});
  KernelRegistry cpu;
  RegisterCpuKernels(&cpu);
  Status created = harness.Create(cpu);
  ASSERT_TRUE(created.ok()) << created.ToString();
  SerialRunner runner;
  ASSERT_TRUE(harness.Run(&runner).ok());

  const BatchedProductPlan plan = PlanBatchedProduct(a, b, test.a_perm, test.b_perm, m, n);
  EXPECT_EQ(plan.calls.size(), test.calls);
  const std::vector<float> want = harness.output(0).floats;
  const std::vector<float> got =
      ComputeByPlan(plan, test, m, n, k, harness.input(0).floats, harness.input(1).floats,
                    Shape(c_dims).NumElements());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4) << "element " << i;
  }
}

TEST(BatchedProductPlanTest, DenseInputsAreOneCallOverEveryBatchAxis) {
  ExpectThePlanComputesWhatTheCpuKernelDoes(
      {Shape({2, 3, 5, 4}), Shape({2, 3, 4, 6}), false, false, {}, {}, /*calls=*/1});
  ExpectThePlanComputesWhatTheCpuKernelDoes(
      {Shape({2, 1, 3, 4, 5}), Shape({2, 1, 3, 6, 4}), true, true, {}, {}, /*calls=*/1});
  ExpectThePlanComputesWhatTheCpuKernelDoes({Shape({4, 7}),
                                             Shape({7, 3}),
                                             false,
                                             false,
                                             {},
                                             {},
                                             /*calls=*/1});
}

TEST(BatchedProductPlanTest, TheTransformersHeadViewsLoopOverTheShorterBatchAxis) {
  const std::vector<int64_t> heads = {0, 2, 1, 3};
  // scores = q k^T with q and k read as [B, H, T, D] from [B, T, H, D]: H = 3 calls of B = 5.
  ExpectThePlanComputesWhatTheCpuKernelDoes(
      {Shape({5, 3, 7, 4}), Shape({5, 3, 7, 4}), false, true, heads, heads, /*calls=*/3});
  // context = attention v, v a view; and a view of a that is transposed.
  ExpectThePlanComputesWhatTheCpuKernelDoes(
      {Shape({5, 3, 7, 7}), Shape({5, 3, 7, 4}), false, false, {}, heads, /*calls=*/3});
  ExpectThePlanComputesWhatTheCpuKernelDoes(
      {Shape({2, 6, 7, 4}), Shape({2, 6, 7, 3}), true, false, heads, {}, /*calls=*/2});
}

TEST(BatchedProductPlanTest, ThreeBatchAxesWithAViewMergeWhatStepsEvenly) {
  // a read as [A, B, C, M, K] from [A, C, B, M, K]: axes A and B cannot merge (a steps over C
  // inside B), so the longest of them is the batch.
  ExpectThePlanComputesWhatTheCpuKernelDoes({Shape({2, 3, 4, 5, 6}),
                                             Shape({2, 3, 4, 6, 2}),
                                             false,
                                             false,
                                             {0, 2, 1, 3, 4},
                                             {},
                                             /*calls=*/6});
}

}  // namespace
}  // namespace runtime
}  // namespace softwire
