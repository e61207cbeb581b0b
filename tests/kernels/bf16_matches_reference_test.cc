// The bf16 kernels (cast, matmul and batch_matmul on bfloat16 inputs, the transfers of bfloat16
// tensors) against the double-precision reference.
//
// Tolerances (docs/PRECISION.md):
// - cast to bfloat16 rounds once, as the reference does: equal, tolerance 0. Back to float32
//   is exact: tolerance 0.
// - a bf16 product's inputs are exact bfloat16 values, and the product of two of them is exact
//   in float32 (8 + 8 significant bits), so the only error is float32 accumulation:
//   SumTolerance(K), as for float32 matmul. The rounding of the inputs themselves is the cast's,
//   tested above; what it costs a model is the end-to-end test's business (tests/precision).
// - copy, slice, assemble of disjoint blocks and the flat ops move bits: tolerance 0.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "base/cpu_features.h"
#include "runtime/kernels/cpu/bf16_product.h"
#include "tests/kernels/cpu_reference_comparison.h"

namespace softwire {
namespace kernel_tests {
namespace {

constexpr Tolerance kExact = {0, 0, 0};

Shape Matrix(int64_t rows, int64_t columns, bool transpose) {
  return transpose ? Shape({columns, rows}) : Shape({rows, columns});
}

OpCase CastCase(runtime::HostTensor x, DType to) {
  const Shape shape = x.shape;
  return OpCase{"cast", {StringAttribute("dtype", DTypeName(to))}, {std::move(x)}, {shape}, {},
                {to}};
}

TEST(CastKernel, RoundsToBFloat16AsTheReferenceDoesAndWidensExactly) {
  // Scaled normals cover many exponents; 4099 elements split unevenly over threads.
  runtime::HostTensor x = RandomFloats(Shape({4099}), 31);
  for (size_t i = 0; i < x.floats.size(); ++i)
    x.floats[i] *= std::ldexp(1.0f, static_cast<int>(i % 40));
  ExpectCpuMatchesReferenceOnEveryRunner(CastCase(x, DType::kBFloat16), kExact);
  ExpectCpuMatchesReferenceOnEveryRunner(
      CastCase(RandomBFloat16s(Shape({7, 129}), 32), DType::kFloat32), kExact);
  EXPECT_GT(ExpectCpuMatchesReferenceOnEveryRunner(
                CastCase(RandomFloats(Shape({300, 400}), 33), DType::kBFloat16), kExact),
            0);
}

OpCase ProductCase(const std::string& type, bool transpose_a, bool transpose_b, Shape a, Shape b,
                   Shape c, uint64_t seed) {
  return OpCase{
      type,
      {BoolAttribute("transpose_a", transpose_a), BoolAttribute("transpose_b", transpose_b)},
      {RandomBFloat16s(a, seed), RandomBFloat16s(b, seed + 1)},
      {std::move(c)}};
}

// Small (one band on the calling thread) and large (bands over the threads, a last band of
// another size) products, every transpose.
void ExpectMatmulsMatchTheReference() {
  struct Case {
    int64_t m;
    int64_t k;
    int64_t n;
  };
  for (const Case& c : {Case{37, 53, 29}, Case{301, 96, 70}, Case{40, 200, 131}}) {
    for (bool transpose_a : {false, true}) {
      for (bool transpose_b : {false, true}) {
        SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.k) + "x" + std::to_string(c.n) +
                     " " + std::to_string(transpose_a) + std::to_string(transpose_b));
        ExpectCpuMatchesReferenceOnEveryRunner(
            ProductCase("matmul", transpose_a, transpose_b, Matrix(c.m, c.k, transpose_a),
                        Matrix(c.k, c.n, transpose_b), Shape({c.m, c.n}), 40),
            SumTolerance(c.k));
      }
    }
  }
  // Leading axes of a flatten into rows.
  ExpectCpuMatchesReferenceOnEveryRunner(
      ProductCase("matmul", false, true, Shape({3, 5, 17}), Shape({11, 17}), Shape({3, 5, 11}), 42),
      SumTolerance(17));
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      SCOPED_TRACE("batch " + std::to_string(transpose_a) + std::to_string(transpose_b));
      ExpectCpuMatchesReferenceOnEveryRunner(
          ProductCase("batch_matmul", transpose_a, transpose_b,
                      transpose_a ? Shape({2, 3, 13, 7}) : Shape({2, 3, 7, 13}),
                      transpose_b ? Shape({2, 3, 5, 13}) : Shape({2, 3, 13, 5}),
                      Shape({2, 3, 7, 5}), 44),
          SumTolerance(13));
    }
  }
}

TEST(Bf16MatmulKernel, SpreadsABatchOfSmallProductsOverTheThreads) {
  // 256 products of 8 x 8 x 8, as attention's heads: whole products on lanes over the runner.
  const int64_t parallel_calls = ExpectCpuMatchesReferenceOnEveryRunner(
      ProductCase("batch_matmul", false, true, Shape({16, 16, 8, 8}), Shape({16, 16, 8, 8}),
                  Shape({16, 16, 8, 8}), 46),
      SumTolerance(8));
  runtime::Bf16ProductShape shape;
  shape.transpose_b = true;
  shape.m = shape.n = shape.k = 8;
  StatusOr<std::unique_ptr<runtime::Bf16Product>> product = runtime::Bf16Product::Create(shape);
  ASSERT_TRUE(product.ok());
  // Only oneDNN's lanes spread the batch; the fallback runs the products one after another.
  if ((*product)->native()) {
    EXPECT_GT(parallel_calls, 0);
  }
}

TEST(Bf16MatmulKernel, MatchesTheReferenceOnThisCpusPath) {
  RecordProperty("cpu", DetectCpuFeatures().Summary());
  ExpectMatmulsMatchTheReference();
}

TEST(Bf16MatmulKernel, MatchesTheReferenceOnTheFloat32FallbackOfCpusWithoutBf16) {
  setenv("SOFTWIRE_CPU_FEATURES_OFF", "avx512_bf16,amx_bf16", 1);
  ExpectMatmulsMatchTheReference();
  unsetenv("SOFTWIRE_CPU_FEATURES_OFF");
}

TEST(Bf16Product, IsNativeExactlyWhereTheCpuHasBf16AndOneDnnIsBuiltIn) {
  runtime::Bf16ProductShape shape;
  shape.m = 256;
  shape.n = 128;
  shape.k = 64;
  StatusOr<std::unique_ptr<runtime::Bf16Product>> product = runtime::Bf16Product::Create(shape);
  ASSERT_TRUE(product.ok()) << product.status();
  RecordProperty("implementation", (*product)->implementation());
  if (!DetectCpuFeatures().native_bf16()) {
    EXPECT_FALSE((*product)->native());
  }
  if ((*product)->native()) {
    EXPECT_NE((*product)->implementation().find("bf16"), std::string::npos)
        << (*product)->implementation();
  }
  StatusOr<std::unique_ptr<runtime::Bf16Product>> fallback =
      runtime::Bf16Product::Create(shape, /*allow_native=*/false);
  ASSERT_TRUE(fallback.ok());
  EXPECT_FALSE((*fallback)->native());
}

TEST(Bf16Transfers, MoveBFloat16TensorsBitForBit) {
  const runtime::HostTensor x = RandomBFloat16s(Shape({6, 10}), 50);
  ExpectCpuMatchesReferenceOnEveryRunner(
      OpCase{"copy", {}, {x}, {Shape({6, 10})}, {}, {DType::kBFloat16}}, kExact);
  ExpectCpuMatchesReferenceOnEveryRunner(
      OpCase{"slice",
             {IntsAttribute("begin", {1, 2}), IntsAttribute("end", {5, 9})},
             {x},
             {Shape({4, 7})},
             {},
             {DType::kBFloat16}},
      kExact);
  ExpectCpuMatchesReferenceOnEveryRunner(
      OpCase{"assemble",
             {IntsAttribute("shape", {6, 20}), IntsAttribute("offsets", {0, 0, 0, 10})},
             {x, RandomBFloat16s(Shape({6, 10}), 51)},
             {Shape({6, 20})},
             {},
             {DType::kBFloat16}},
      kExact);
  ExpectCpuMatchesReferenceOnEveryRunner(OpCase{"flat_split",
                                                {IntsAttribute("sizes", {25, 35})},
                                                {x},
                                                {Shape({25}), Shape({35})},
                                                {},
                                                {DType::kBFloat16, DType::kBFloat16}},
                                         kExact);
  ExpectCpuMatchesReferenceOnEveryRunner(
      OpCase{"reshape", {IntsAttribute("shape", {60})}, {x}, {Shape({60})}, {}, {DType::kBFloat16}},
      kExact);
}

}  // namespace
}  // namespace kernel_tests
}  // namespace softwire
