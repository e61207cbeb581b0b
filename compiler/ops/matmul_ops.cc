// matmul and batch_matmul (docs/OPS.md): shape inference, gradients, cost.
#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

std::vector<AttributeSpec> TransposeSchema() {
  return {AttributeWithDefault("transpose_a", AttributeValue(false)),
          AttributeWithDefault("transpose_b", AttributeValue(false))};
}

Status KMismatch(const InferenceContext& context, int64_t a_k, int64_t b_k) {
  return InvalidArgumentError("input 'a' has shape " + context.input_shape(0).ToString() +
                              " (K = " + std::to_string(a_k) +
                              ") but input 'b' expects K = " + std::to_string(b_k) +
                              " (b has shape " + context.input_shape(1).ToString() + ")");
}

// Both inputs float32, or both bfloat16 (the precision policy's products, docs/PRECISION.md);
// c is float32 either way: bfloat16 products accumulate in float32.
Status RequireProductDTypes(const InferenceContext& context) {
  if (context.input(0).dtype == DType::kBFloat16) {
    return context.RequireDType(1, DType::kBFloat16);
  }
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  return context.RequireDType(1, DType::kFloat32);
}

// a: [M, K] ([K, M] transposed), or [..., K] untransposed; b: [K, N] ([N, K] transposed).
Status InferMatmul(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(RequireProductDTypes(context));
  bool transpose_a = context.attributes().GetBool("transpose_a");
  bool transpose_b = context.attributes().GetBool("transpose_b");
  const Shape& a = context.input_shape(0);
  const Shape& b = context.input_shape(1);
  SOFTWIRE_RETURN_IF_ERROR(transpose_a ? context.RequireRank(0, 2)
                                       : context.RequireRankAtLeast(0, 2));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRank(1, 2));
  int64_t a_k = transpose_a ? a.dim(0) : a.dim(-1);
  int64_t b_k = transpose_b ? b.dim(1) : b.dim(0);
  int64_t n = transpose_b ? b.dim(0) : b.dim(1);
  if (a_k != b_k) return KMismatch(context, a_k, b_k);
  std::vector<int64_t> dims;
  if (transpose_a) {
    dims = {a.dim(1), n};
  } else {
    dims.assign(a.dims().begin(), a.dims().end() - 1);
    dims.push_back(n);
  }
  context.SetOutput(0, Float32(Shape(std::move(dims))));
  return Status::Ok();
}

// a: [..., M, K], b: [..., K, N] with identical leading axes; transposes swap the last two.
Status InferBatchMatmul(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(RequireProductDTypes(context));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 2));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(1, 2));
  const Shape& a = context.input_shape(0);
  const Shape& b = context.input_shape(1);
  std::vector<int64_t> a_batch(a.dims().begin(), a.dims().end() - 2);
  std::vector<int64_t> b_batch(b.dims().begin(), b.dims().end() - 2);
  if (a_batch != b_batch) {
    return InvalidArgumentError("input 'a' " + a.ToString() + " and input 'b' " + b.ToString() +
                                " must have identical batch axes (all but the last two)");
  }
  bool transpose_a = context.attributes().GetBool("transpose_a");
  bool transpose_b = context.attributes().GetBool("transpose_b");
  int64_t m = transpose_a ? a.dim(-1) : a.dim(-2);
  int64_t a_k = transpose_a ? a.dim(-2) : a.dim(-1);
  int64_t b_k = transpose_b ? b.dim(-1) : b.dim(-2);
  int64_t n = transpose_b ? b.dim(-2) : b.dim(-1);
  if (a_k != b_k) return KMismatch(context, a_k, b_k);
  a_batch.push_back(m);
  a_batch.push_back(n);
  context.SetOutput(0, Float32(Shape(std::move(a_batch))));
  return Status::Ok();
}

// 2 * M * N * K for every batch: the product of c's extents times K.
OpCost MatmulCost(const OpSignature& signature) {
  const Shape& b = signature.inputs[1].shape;
  bool transpose_b = signature.attributes.GetBool("transpose_b");
  int64_t k = transpose_b ? b.dim(-1) : b.dim(-2);
  double flops =
      2.0 * static_cast<double>(signature.outputs[0].NumElements()) * static_cast<double>(k);
  return OpCost{flops, TouchedBytes(signature), /*product=*/true};
}

// The four transpose cases of c = op(a) op(b), as (left, right, transpose_left,
// transpose_right) products giving da and db laid out like a and b:
//   ta=0 tb=0: da = dc b^T        db = a^T dc
//   ta=0 tb=1: da = dc b          db = dc^T a
//   ta=1 tb=0: da = b dc^T        db = a dc
//   ta=1 tb=1: da = b^T dc^T      db = dc^T a^T
struct Product {
  bool dc_first;
  bool transpose_left;
  bool transpose_right;
};

Product InputAProduct(bool ta, bool tb) {
  if (!ta) return {true, false, !tb};
  return {false, tb, true};
}

Product InputBProduct(bool ta, bool tb) {
  if (!tb) return {false, !ta, false};
  return {true, true, ta};
}

StatusOr<TensorId> AddProduct(GradientBuilder& g, const std::string& suffix,
                              const std::string& type, const Product& product, TensorId dc,
                              TensorId other) {
  TensorId left = product.dc_first ? dc : other;
  TensorId right = product.dc_first ? other : dc;
  return g.Add(suffix, type, {left, right},
               TransposeAttributes(product.transpose_left, product.transpose_right));
}

Status BatchMatmulGradient(GradientBuilder& g) {
  bool ta = g.attributes().GetBool("transpose_a");
  bool tb = g.attributes().GetBool("transpose_b");
  TensorId dc = g.output_gradient(0);
  if (g.wants(0)) {
    SOFTWIRE_ASSIGN_OR_RETURN(
        TensorId da, AddProduct(g, "a", "batch_matmul", InputAProduct(ta, tb), dc, g.input(1)));
    g.SetInputGradient(0, da);
  }
  if (g.wants(1)) {
    SOFTWIRE_ASSIGN_OR_RETURN(
        TensorId db, AddProduct(g, "b", "batch_matmul", InputBProduct(ta, tb), dc, g.input(0)));
    g.SetInputGradient(1, db);
  }
  return Status::Ok();
}

// With a of rank > 2 (only untransposed), da keeps a's leading axes by itself (matmul accepts
// [..., K] on the left), but db needs a and dc flattened to [M, K] and [M, N].
Status MatmulGradient(GradientBuilder& g) {
  bool ta = g.attributes().GetBool("transpose_a");
  bool tb = g.attributes().GetBool("transpose_b");
  TensorId a = g.input(0);
  TensorId dc = g.output_gradient(0);
  if (g.wants(0)) {
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId da,
                              AddProduct(g, "a", "matmul", InputAProduct(ta, tb), dc, g.input(1)));
    g.SetInputGradient(0, da);
  }
  if (!g.wants(1)) return Status::Ok();
  if (g.shape(a).rank() > 2) {
    int64_t k = g.shape(a).dim(-1);
    int64_t n = g.shape(dc).dim(-1);
    SOFTWIRE_ASSIGN_OR_RETURN(
        a, g.Add("b.flatten_a", "reshape", {a}, Attributes("shape", std::vector<int64_t>{-1, k})));
    SOFTWIRE_ASSIGN_OR_RETURN(dc, g.Add("b.flatten_dc", "reshape", {dc},
                                        Attributes("shape", std::vector<int64_t>{-1, n})));
  }
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId db,
                            AddProduct(g, "b", "matmul", InputBProduct(ta, tb), dc, a));
  g.SetInputGradient(1, db);
  return Status::Ok();
}

// c = op(a) op(b): split a's M axes (or its single M axis when transposed) -> split c there;
// split b's N axis -> split c's last axis; split K on both -> partial sums; linear in each
// input.
std::vector<SbpSignature> MatmulSignatures(const OpSignature& op) {
  const bool ta = op.attributes.GetBool("transpose_a");
  const bool tb = op.attributes.GetBool("transpose_b");
  const int a_rank = op.inputs[0].shape.rank();
  const int c_rank = op.outputs[0].shape.rank();
  std::vector<SbpSignature> signatures;
  if (ta) {
    signatures.push_back(Signature({S(1), kB}, {S(0)}));
  } else {
    for (int m = 0; m < a_rank - 1; ++m) signatures.push_back(Signature({S(m), kB}, {S(m)}));
  }
  signatures.push_back(Signature({kB, S(tb ? 0 : 1)}, {S(c_rank - 1)}));
  signatures.push_back(Signature({S(ta ? 0 : a_rank - 1), S(tb ? 1 : 0)}, {kP}));
  signatures.push_back(PartialThrough(2, 0, 1));
  signatures.push_back(PartialThrough(2, 1, 1));
  return signatures;
}

// [..., M, K] x [..., K, N]: batch axes split on both; M, N and K as for matmul.
std::vector<SbpSignature> BatchMatmulSignatures(const OpSignature& op) {
  const bool ta = op.attributes.GetBool("transpose_a");
  const bool tb = op.attributes.GetBool("transpose_b");
  const int rank = op.inputs[0].shape.rank();
  std::vector<SbpSignature> signatures;
  for (int batch = 0; batch < rank - 2; ++batch) {
    signatures.push_back(Signature({S(batch), S(batch)}, {S(batch)}));
  }
  signatures.push_back(Signature({S(ta ? rank - 1 : rank - 2), kB}, {S(rank - 2)}));
  signatures.push_back(Signature({kB, S(tb ? rank - 2 : rank - 1)}, {S(rank - 1)}));
  signatures.push_back(Signature({S(ta ? rank - 2 : rank - 1), S(tb ? rank - 1 : rank - 2)}, {kP}));
  signatures.push_back(PartialThrough(2, 0, 1));
  signatures.push_back(PartialThrough(2, 1, 1));
  return signatures;
}

}  // namespace

void AddMatmulOps(OpRegistry& registry) {
  OpDefinition matmul;
  matmul.type = "matmul";
  matmul.input_names = {"a", "b"};
  matmul.output_names = {"c"};
  matmul.attributes = TransposeSchema();
  matmul.infer = InferMatmul;
  matmul.gradient = MatmulGradient;
  matmul.cost = MatmulCost;
  matmul.sbp_signatures = MatmulSignatures;
  registry.Add(matmul);

  OpDefinition batch_matmul = matmul;
  batch_matmul.type = "batch_matmul";
  batch_matmul.infer = InferBatchMatmul;
  batch_matmul.gradient = BatchMatmulGradient;
  batch_matmul.sbp_signatures = BatchMatmulSignatures;
  registry.Add(batch_matmul);
}

}  // namespace compiler
}  // namespace softwire
