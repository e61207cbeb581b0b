// Every gradient op of docs/OPS.md checked against central finite differences of the reference
// forward op, in double precision: for random weights w, the gradient op applied to w must equal
// d/dx sum(w * f(x)).
//
// Tolerance (the harness is testing/finite_differences.h): with step h = 1e-5 the central
// difference has truncation error ~h^2 |f'''| ~ 1e-10 and rounding error ~1e-16 |sum| / h ~ 1e-10
// for the sums of O(10) here, so 1e-6 relative (plus 1e-6 absolute) leaves four orders of
// margin while any wrong term (a missing factor, a transposed index) is off by O(1).
#include <gtest/gtest.h>

#include "reference/kernels/testing/finite_differences.h"

namespace softwire {
namespace reference {
namespace {

TEST(ReferenceGradients, ReluGradIsTheDerivativeOfRelu) {
  const Shape shape({3, 5});
  ReferenceTensor x = RandomTensor(shape, 1);
  for (double& value : x.values) value += value > 0 ? 0.1 : -0.1;  // Stay off the kink.
  std::vector<double> w = Normals(shape.NumElements(), 2);
  ReferenceTensor y = Apply("relu", {}, {x}, {shape})[0];
  ReferenceTensor dx = Apply("relu_grad", {}, {FloatTensor(shape, w), y}, {shape})[0];
  ExpectGradient({"relu", {}, {shape}}, {x}, 0, w, dx);
}

TEST(ReferenceGradients, GeluGradIsTheDerivativeOfGelu) {
  const Shape shape({4, 7});
  ReferenceTensor x = RandomTensor(shape, 3);
  for (double& value : x.values) value *= 2.5;  // Reach the curved tails.
  std::vector<double> w = Normals(shape.NumElements(), 4);
  ReferenceTensor dx = Apply("gelu_grad", {}, {FloatTensor(shape, w), x}, {shape})[0];
  ExpectGradient({"gelu", {}, {shape}}, {x}, 0, w, dx);
}

TEST(ReferenceGradients, SoftmaxGradIsTheDerivativeOfSoftmax) {
  for (bool causal : {false, true}) {
    const Shape shape({2, 4, 4});
    std::vector<proto::Attribute> attributes = {BoolAttribute("causal", causal)};
    ReferenceTensor x = RandomTensor(shape, 5);
    std::vector<double> w = Normals(shape.NumElements(), 6);
    ReferenceTensor y = Apply("softmax", attributes, {x}, {shape})[0];
    ReferenceTensor dx = Apply("softmax_grad", {}, {FloatTensor(shape, w), y}, {shape})[0];
    SCOPED_TRACE(causal ? "causal" : "full");
    ExpectGradient({"softmax", attributes, {shape}}, {x}, 0, w, dx);
  }
}

TEST(ReferenceGradients, SoftmaxCrossEntropyGradIsTheDerivativeOfTheLoss) {
  const Shape logits_shape({2, 3, 6});
  const Shape rows({2, 3});
  ReferenceTensor logits = RandomTensor(logits_shape, 7);
  ReferenceTensor labels = IntTensor(rows, {0, 5, 2, 2, 3, 1});
  std::vector<double> w = Normals(rows.NumElements(), 8);
  ReferenceTensor dlogits = Apply("softmax_cross_entropy_grad", {},
                                  {FloatTensor(rows, w), logits, labels}, {logits_shape})[0];
  ExpectGradient({"softmax_cross_entropy", {}, {rows}}, {logits, labels}, 0, w, dlogits);
}

TEST(ReferenceGradients, LayerNormGradGivesTheDerivativesForXGammaAndBeta) {
  const Shape shape({3, 2, 5});
  const Shape channels({5});
  std::vector<proto::Attribute> attributes = {FloatAttribute("epsilon", 1e-3)};
  ReferenceTensor x = RandomTensor(shape, 9);
  ReferenceTensor gamma = RandomTensor(channels, 10);
  ReferenceTensor beta = RandomTensor(channels, 11);
  std::vector<double> w = Normals(shape.NumElements(), 12);
  std::vector<ReferenceTensor> grads =
      Apply("layer_norm_grad", attributes, {FloatTensor(shape, w), x, gamma},
            {shape, channels, channels});
  Forward forward{"layer_norm", attributes, {shape}};
  for (size_t wrt = 0; wrt < 3; ++wrt) {
    ExpectGradient(forward, {x, gamma, beta}, wrt, w, grads[wrt]);
  }
}

TEST(ReferenceGradients, EmbeddingGradAccumulatesRepeatedIds) {
  const Shape table_shape({5, 3});
  const Shape ids_shape({2, 4});
  const Shape y_shape({2, 4, 3});
  ReferenceTensor table = RandomTensor(table_shape, 13);
  ReferenceTensor ids = IntTensor(ids_shape, {1, 4, 1, 0, 4, 4, 2, 1});
  std::vector<double> w = Normals(y_shape.NumElements(), 14);
  ReferenceTensor dtable = Apply("embedding_grad", {IntAttribute("num_embeddings", 5)},
                                 {FloatTensor(y_shape, w), ids}, {table_shape})[0];
  ExpectGradient({"embedding", {}, {y_shape}}, {table, ids}, 0, w, dtable);
}

TEST(ReferenceGradients, BiasAddGradIsTheDerivativeForTheBias) {
  const Shape shape({2, 3, 4});
  ReferenceTensor x = RandomTensor(shape, 15);
  ReferenceTensor bias = RandomTensor(Shape({4}), 16);
  std::vector<double> w = Normals(shape.NumElements(), 17);
  ReferenceTensor dbias = Apply("bias_add_grad", {}, {FloatTensor(shape, w)}, {Shape({4})})[0];
  ExpectGradient({"bias_add", {}, {shape}}, {x, bias}, 1, w, dbias);
  ExpectGradient({"bias_add", {}, {shape}}, {x, bias}, 0, w, FloatTensor(shape, w));
}

// add, sub and mul with broadcasting: the gradients of docs/OPS.md, built from sum_to_shape.
TEST(ReferenceGradients, SumToShapeIsTheAdjointOfBroadcastingInAddSubAndMul) {
  const Shape a_shape({3, 1, 4});
  const Shape b_shape({5, 1});
  const Shape c_shape({3, 5, 4});
  ReferenceTensor a = RandomTensor(a_shape, 18);
  ReferenceTensor b = RandomTensor(b_shape, 19);
  std::vector<double> w = Normals(c_shape.NumElements(), 20);
  ReferenceTensor dc = FloatTensor(c_shape, w);
  auto sum_to = [](const ReferenceTensor& x, const Shape& shape) {
    return Apply("sum_to_shape", {IntsAttribute("shape", shape.dims())}, {x}, {shape})[0];
  };
  ExpectGradient({"add", {}, {c_shape}}, {a, b}, 0, w, sum_to(dc, a_shape));
  ExpectGradient({"add", {}, {c_shape}}, {a, b}, 1, w, sum_to(dc, b_shape));
  ReferenceTensor minus_dc = Apply("scale", {FloatAttribute("factor", -1)}, {dc}, {c_shape})[0];
  ExpectGradient({"sub", {}, {c_shape}}, {a, b}, 0, w, sum_to(dc, a_shape));
  ExpectGradient({"sub", {}, {c_shape}}, {a, b}, 1, w, sum_to(minus_dc, b_shape));
  ReferenceTensor dc_times_b = Apply("mul", {}, {dc, b}, {c_shape})[0];
  ReferenceTensor dc_times_a = Apply("mul", {}, {dc, a}, {c_shape})[0];
  ExpectGradient({"mul", {}, {c_shape}}, {a, b}, 0, w, sum_to(dc_times_b, a_shape));
  ExpectGradient({"mul", {}, {c_shape}}, {a, b}, 1, w, sum_to(dc_times_a, b_shape));
}

TEST(ReferenceGradients, BroadcastAxesIsTheAdjointOfReduceSumAndReduceMean) {
  const Shape x_shape({3, 4, 2, 5});
  ReferenceTensor x = RandomTensor(x_shape, 21);
  for (bool keepdims : {false, true}) {
    for (bool mean : {false, true}) {
      const std::vector<int64_t> axes = {-1, 1};
      const Shape y_shape = keepdims ? Shape({3, 1, 2, 1}) : Shape({3, 2});
      std::vector<proto::Attribute> attributes = {IntsAttribute("axes", axes),
                                                  BoolAttribute("keepdims", keepdims)};
      std::vector<double> w = Normals(y_shape.NumElements(), 22);
      ReferenceTensor dx = Apply(
          "broadcast_axes", {IntsAttribute("shape", x_shape.dims()), IntsAttribute("axes", axes)},
          {FloatTensor(y_shape, w)}, {x_shape})[0];
      if (mean) dx = Apply("scale", {FloatAttribute("factor", 1.0 / 20)}, {dx}, {x_shape})[0];
      SCOPED_TRACE(std::string(mean ? "reduce_mean" : "reduce_sum") +
                   (keepdims ? " keepdims" : ""));
      ExpectGradient({mean ? "reduce_mean" : "reduce_sum", attributes, {y_shape}}, {x}, 0, w, dx);
    }
  }
}

// Shapes of a and b for the given transposes of an [M, K] x [K, N] product.
Shape MatrixShape(int64_t rows, int64_t columns, bool transpose) {
  return transpose ? Shape({columns, rows}) : Shape({rows, columns});
}

// The matmul gradient rule of docs/OPS.md, as matmuls with transposes:
// da = dc op(b)^T laid out like a, db = op(a)^T dc laid out like b.
TEST(ReferenceGradients, MatmulGradientsAreMatmulsWithTransposes) {
  const int64_t m = 3;
  const int64_t k = 4;
  const int64_t n = 2;
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      const Shape a_shape = MatrixShape(m, k, transpose_a);
      const Shape b_shape = MatrixShape(k, n, transpose_b);
      const Shape c_shape({m, n});
      ReferenceTensor a = RandomTensor(a_shape, 23);
      ReferenceTensor b = RandomTensor(b_shape, 24);
      std::vector<double> w = Normals(c_shape.NumElements(), 25);
      ReferenceTensor dc = FloatTensor(c_shape, w);
      ReferenceTensor da = transpose_a
                               ? Apply("matmul",
                                       {BoolAttribute("transpose_a", transpose_b),
                                        BoolAttribute("transpose_b", true)},
                                       {b, dc}, {a_shape})[0]
                               : Apply("matmul", {BoolAttribute("transpose_b", !transpose_b)},
                                       {dc, b}, {a_shape})[0];
      ReferenceTensor db = transpose_b
                               ? Apply("matmul",
                                       {BoolAttribute("transpose_a", true),
                                        BoolAttribute("transpose_b", transpose_a)},
                                       {dc, a}, {b_shape})[0]
                               : Apply("matmul", {BoolAttribute("transpose_a", !transpose_a)},
                                       {a, dc}, {b_shape})[0];
      Forward forward{
          "matmul",
          {BoolAttribute("transpose_a", transpose_a), BoolAttribute("transpose_b", transpose_b)},
          {c_shape}};
      SCOPED_TRACE(std::to_string(transpose_a) + std::to_string(transpose_b));
      ExpectGradient(forward, {a, b}, 0, w, da);
      ExpectGradient(forward, {a, b}, 1, w, db);
    }
  }
}

TEST(ReferenceGradients, MatmulWithLeadingAxesFlattensThemForTheWeightGradient) {
  const Shape a_shape({2, 3, 4});
  const Shape b_shape({4, 5});
  const Shape c_shape({2, 3, 5});
  ReferenceTensor a = RandomTensor(a_shape, 26);
  ReferenceTensor b = RandomTensor(b_shape, 27);
  std::vector<double> w = Normals(c_shape.NumElements(), 28);
  ReferenceTensor dc = FloatTensor(c_shape, w);
  ReferenceTensor da = Apply("matmul", {BoolAttribute("transpose_b", true)}, {dc, b}, {a_shape})[0];
  ReferenceTensor a_rows =
      Apply("reshape", {IntsAttribute("shape", {-1, 4})}, {a}, {Shape({6, 4})})[0];
  ReferenceTensor dc_rows =
      Apply("reshape", {IntsAttribute("shape", {6, 5})}, {dc}, {Shape({6, 5})})[0];
  ReferenceTensor db =
      Apply("matmul", {BoolAttribute("transpose_a", true)}, {a_rows, dc_rows}, {b_shape})[0];
  ExpectGradient({"matmul", {}, {c_shape}}, {a, b}, 0, w, da);
  ExpectGradient({"matmul", {}, {c_shape}}, {a, b}, 1, w, db);
}

TEST(ReferenceGradients, BatchMatmulGradientsAreBatchMatmulsWithTransposes) {
  for (bool transpose_a : {false, true}) {
    for (bool transpose_b : {false, true}) {
      const Shape a_shape = transpose_a ? Shape({2, 3, 4, 3}) : Shape({2, 3, 3, 4});
      const Shape b_shape = transpose_b ? Shape({2, 3, 2, 4}) : Shape({2, 3, 4, 2});
      const Shape c_shape({2, 3, 3, 2});
      ReferenceTensor a = RandomTensor(a_shape, 29);
      ReferenceTensor b = RandomTensor(b_shape, 30);
      std::vector<double> w = Normals(c_shape.NumElements(), 31);
      ReferenceTensor dc = FloatTensor(c_shape, w);
      ReferenceTensor da = transpose_a
                               ? Apply("batch_matmul",
                                       {BoolAttribute("transpose_a", transpose_b),
                                        BoolAttribute("transpose_b", true)},
                                       {b, dc}, {a_shape})[0]
                               : Apply("batch_matmul", {BoolAttribute("transpose_b", !transpose_b)},
                                       {dc, b}, {a_shape})[0];
      ReferenceTensor db = transpose_b
                               ? Apply("batch_matmul",
                                       {BoolAttribute("transpose_a", true),
                                        BoolAttribute("transpose_b", transpose_a)},
                                       {dc, a}, {b_shape})[0]
                               : Apply("batch_matmul", {BoolAttribute("transpose_a", !transpose_a)},
                                       {a, dc}, {b_shape})[0];
      Forward forward{
          "batch_matmul",
          {BoolAttribute("transpose_a", transpose_a), BoolAttribute("transpose_b", transpose_b)},
          {c_shape}};
      SCOPED_TRACE(std::to_string(transpose_a) + std::to_string(transpose_b));
      ExpectGradient(forward, {a, b}, 0, w, da);
      ExpectGradient(forward, {a, b}, 1, w, db);
    }
  }
}

TEST(ReferenceGradients, TransposeReshapeAndScaleGradientsFollowOps) {
  const Shape x_shape({2, 3, 4});
  ReferenceTensor x = RandomTensor(x_shape, 32);
  const Shape y_shape({4, 2, 3});
  std::vector<double> w = Normals(y_shape.NumElements(), 33);
  // perm [2, 0, 1] has inverse [1, 2, 0].
  ReferenceTensor dx = Apply("transpose", {IntsAttribute("perm", {1, 2, 0})},
                             {FloatTensor(y_shape, w)}, {x_shape})[0];
  ExpectGradient({"transpose", {IntsAttribute("perm", {2, 0, 1})}, {y_shape}}, {x}, 0, w, dx);
  ReferenceTensor reshaped_dx = Apply("reshape", {IntsAttribute("shape", x_shape.dims())},
                                      {FloatTensor(Shape({6, 4}), Normals(24, 34))}, {x_shape})[0];
  ExpectGradient({"reshape", {IntsAttribute("shape", {6, -1})}, {Shape({6, 4})}}, {x}, 0,
                 Normals(24, 34), reshaped_dx);
  ReferenceTensor scaled_dx = Apply("scale", {FloatAttribute("factor", -0.5)},
                                    {FloatTensor(x_shape, Normals(24, 35))}, {x_shape})[0];
  ExpectGradient({"scale", {FloatAttribute("factor", -0.5)}, {x_shape}}, {x}, 0, Normals(24, 35),
                 scaled_dx);
}

}  // namespace
}  // namespace reference
}  // namespace softwire
