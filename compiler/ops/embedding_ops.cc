// embedding and embedding_grad (docs/OPS.md).
#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

// table [V, C] float32, ids [...] int32 -> [..., C].
Status InferEmbedding(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRank(0, 2));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(1, DType::kInt32));
  std::vector<int64_t> dims = context.input_shape(1).dims();
  dims.push_back(context.input_shape(0).dim(1));
  context.SetOutput(0, Float32(Shape(std::move(dims))));
  return Status::Ok();
}

Status EmbeddingGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  int64_t vocabulary = g.shape(g.input(0)).dim(0);
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dtable,
                            g.Add("table", "embedding_grad", {g.output_gradient(0), g.input(1)},
                                  Attributes("num_embeddings", vocabulary)));
  g.SetInputGradient(0, dtable);
  return Status::Ok();
}

// dy [..., C] float32, ids [...] int32 -> [num_embeddings, C].
Status InferEmbeddingGrad(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireRankAtLeast(0, 1));
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(1, DType::kInt32));
  int64_t num_embeddings = context.attributes().GetInt("num_embeddings");
  if (num_embeddings < 1) {
    return InvalidArgumentError("attribute 'num_embeddings' must be >= 1, got " +
                                std::to_string(num_embeddings));
  }
  const Shape& dy = context.input_shape(0);
  std::vector<int64_t> expected = context.input_shape(1).dims();
  expected.push_back(dy.dim(-1));
  if (dy != Shape(expected)) {
    return InvalidArgumentError("input 'dy' " + dy.ToString() + " must be input 'ids' " +
                                context.input_shape(1).ToString() + " plus a channel axis");
  }
  context.SetOutput(0, Float32(Shape({num_embeddings, dy.dim(-1)})));
  return Status::Ok();
}

// (table [V, C], ids [...]) -> [..., C]: split ids split the rows looked up; a split C splits
// the result's last axis; a table split by rows gives each part the rows it holds and zeros
// elsewhere, partial sums of the result. Linear in the table.
std::vector<SbpSignature> EmbeddingSignatures(const OpSignature& op) {
  const int id_rank = op.inputs[1].shape.rank();
  std::vector<SbpSignature> signatures;
  for (int axis = 0; axis < id_rank; ++axis) {
    signatures.push_back(Signature({kB, S(axis)}, {S(axis)}));
  }
  signatures.push_back(Signature({S(1), kB}, {S(id_rank)}));
  signatures.push_back(Signature({S(0), kB}, {kP}));
  signatures.push_back(PartialThrough(2, 0, 1));
  return signatures;
}

// (dy [..., C], ids [...]) -> [V, C]: split rows scatter into partial tables; a split C stays
// split; a table split by rows keeps only its rows (ids outside are skipped). Linear in dy.
std::vector<SbpSignature> EmbeddingGradSignatures(const OpSignature& op) {
  const int id_rank = op.inputs[1].shape.rank();
  std::vector<SbpSignature> signatures;
  for (int axis = 0; axis < id_rank; ++axis) {
    signatures.push_back(Signature({S(axis), S(axis)}, {kP}));
  }
  signatures.push_back(Signature({S(id_rank), kB}, {S(1)}));
  signatures.push_back(Signature({kB, kB}, {S(0)}));
  signatures.push_back(PartialThrough(2, 0, 1));
  return signatures;
}

// docs/OPS.md "Physical attributes": a part of the table's rows reads ids from index_begin.
void LocalizeEmbedding(PhysicalContext& context) {
  const int64_t rows = context.local_inputs[0].shape.dim(0);
  if (rows == context.logical_inputs[0].shape.dim(0)) return;
  context.attributes.Set("index_begin", context.input_boxes[0].begin[0]);
  context.attributes.Set("partial", true);
}

void LocalizeEmbeddingGrad(PhysicalContext& context) {
  const int64_t rows = context.local_outputs[0].shape.dim(0);
  context.attributes.Set("num_embeddings", rows);
  if (rows == context.logical_outputs[0].shape.dim(0)) return;
  context.attributes.Set("index_begin", context.output_boxes[0].begin[0]);
  context.attributes.Set("partial", true);
}

}  // namespace

void AddEmbeddingOps(OpRegistry& registry) {
  OpDefinition embedding;
  embedding.type = "embedding";
  embedding.input_names = {"table", "ids"};
  embedding.output_names = {"y"};
  embedding.infer = InferEmbedding;
  embedding.gradient = EmbeddingGradient;
  embedding.cost = [](const OpSignature& signature) {
    return OpCost{0, 2.0 * static_cast<double>(signature.outputs[0].NumBytes()) +
                         static_cast<double>(signature.inputs[1].NumBytes())};
  };
  embedding.sbp_signatures = EmbeddingSignatures;
  embedding.localize = LocalizeEmbedding;
  registry.Add(embedding);

  OpDefinition embedding_grad;
  embedding_grad.type = "embedding_grad";
  embedding_grad.usage = OpUsage::kInternal;
  embedding_grad.input_names = {"dy", "ids"};
  embedding_grad.output_names = {"dtable"};
  embedding_grad.attributes = {RequiredAttribute("num_embeddings", AttributeKind::kInt)};
  embedding_grad.infer = InferEmbeddingGrad;
  embedding_grad.cost = [](const OpSignature& signature) {
    return OpCost{static_cast<double>(signature.inputs[0].NumElements()), TouchedBytes(signature)};
  };
  embedding_grad.sbp_signatures = EmbeddingGradSignatures;
  embedding_grad.localize = LocalizeEmbeddingGrad;
  registry.Add(embedding_grad);
}

}  // namespace compiler
}  // namespace softwire
