// The transformer's cuda kernels against their cpu kernels on the same random inputs:
// layer_norm and its gradient, embedding and its gradient, transpose, slice, assemble, the flat
// ops, casts, accuracy, sum_to_shape and batch_matmul's strided views
// (cuda_kernels_gpu_test_util.h: the comparison and its tolerances). Skips without a GPU.
#include <cstdint>

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

}  // namespace
}  // namespace runtime
}  // namespace softwire
