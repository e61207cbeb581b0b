// reshape and transpose (docs/OPS.md).
#include <algorithm>

#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

// Resolves a single -1 in `dims` so that the product equals `elements`.
StatusOr<Shape> ResolveReshape(const std::vector<int64_t>& dims, const TensorType& x) {
  int inferred_axis = -1;
  int64_t known = 1;
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (dims[axis] == -1) {
      if (inferred_axis >= 0) {
        return InvalidArgumentError("attribute 'shape' " + Shape(dims).ToString() +
                                    " has more than one -1");
      }
      inferred_axis = static_cast<int>(axis);
    } else if (dims[axis] < 1) {
      return InvalidArgumentError("attribute 'shape' " + Shape(dims).ToString() + " has extent " +
                                  std::to_string(dims[axis]) +
                                  "; extents must be >= 1 or a single -1");
    } else {
      known *= dims[axis];
    }
  }
  int64_t elements = x.NumElements();
  bool fits = inferred_axis >= 0 ? elements % known == 0 : known == elements;
  if (!fits) {
    return InvalidArgumentError("attribute 'shape' " + Shape(dims).ToString() +
                                " cannot hold input 'x' " + x.ToString() + " (" +
                                std::to_string(elements) + " elements)");
  }
  std::vector<int64_t> resolved = dims;
  if (inferred_axis >= 0) resolved[inferred_axis] = elements / known;
  return Shape(std::move(resolved));
}

Status InferReshape(InferenceContext& context) {
  SOFTWIRE_ASSIGN_OR_RETURN(
      Shape shape, ResolveReshape(context.attributes().GetInts("shape"), context.input(0)));
  context.SetOutput(0, TensorType{context.input(0).dtype, std::move(shape)});
  return Status::Ok();
}

Status ReshapeGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dx, g.Add("x", "reshape", {g.output_gradient(0)},
                                               Attributes("shape", g.shape(g.input(0)).dims())));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

Status InferTranspose(InferenceContext& context) {
  const std::vector<int64_t>& perm = context.attributes().GetInts("perm");
  const Shape& x = context.input_shape(0);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = static_cast<int>(perm.size()) == x.rank();
  for (size_t i = 0; is_permutation && i < sorted.size(); ++i) {
    is_permutation = sorted[i] == static_cast<int64_t>(i);
  }
  if (!is_permutation) {
    return InvalidArgumentError("attribute 'perm' " + Shape(perm).ToString() +
                                " is not a permutation of the " + std::to_string(x.rank()) +
                                " axes of input 'x' " + context.input(0).ToString());
  }
  std::vector<int64_t> dims;
  for (int64_t axis : perm) dims.push_back(x.dim(static_cast<int>(axis)));
  context.SetOutput(0, TensorType{context.input(0).dtype, Shape(std::move(dims))});
  return Status::Ok();
}

Status TransposeGradient(GradientBuilder& g) {
  if (!g.wants(0)) return Status::Ok();
  std::vector<int64_t> inverse = InversePermutation(g.attributes().GetInts("perm"));
  SOFTWIRE_ASSIGN_OR_RETURN(
      TensorId dx, g.Add("x", "transpose", {g.output_gradient(0)}, Attributes("perm", inverse)));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

// The first axis of [begin, end) with extent > 1, or -1.
int FirstNonUnit(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  for (size_t axis = begin; axis < end; ++axis) {
    if (dims[axis] > 1) return static_cast<int>(axis);
  }
  return -1;
}

// Input and output axes fall into groups of equal element count (merged, kept or split axes).
// Splitting a group's outermost axis into n parts cuts its flat range into n contiguous
// chunks on both sides, so that split maps through the reshape; inner axes do not.
std::vector<SbpSignature> ReshapeSignatures(const OpSignature& op) {
  const std::vector<int64_t>& in = op.inputs[0].shape.dims();
  const std::vector<int64_t>& out = op.outputs[0].shape.dims();
  std::vector<SbpSignature> signatures;
  size_t i = 0;
  size_t o = 0;
  while (i < in.size() && o < out.size()) {
    const size_t i0 = i;
    const size_t o0 = o;
    int64_t in_count = in[i++];
    int64_t out_count = out[o++];
    while (in_count != out_count) {
      if (in_count < out_count && i < in.size()) {
        in_count *= in[i++];
      } else if (out_count < in_count && o < out.size()) {
        out_count *= out[o++];
      } else {
        return signatures;  // Counts differ only when inference failed before.
      }
    }
    const int in_axis = FirstNonUnit(in, i0, i);
    const int out_axis = FirstNonUnit(out, o0, o);
    if (in_axis >= 0 && out_axis >= 0) signatures.push_back(Signature({S(in_axis)}, {S(out_axis)}));
  }
  signatures.push_back(AllPartial(1, 1));
  return signatures;
}

// y axis i is x axis perm[i].
std::vector<SbpSignature> TransposeSignatures(const OpSignature& op) {
  const std::vector<int64_t>& perm = op.attributes.GetInts("perm");
  std::vector<SbpSignature> signatures;
  for (size_t axis = 0; axis < perm.size(); ++axis) {
    signatures.push_back(Signature({S(static_cast<int>(perm[axis]))}, {S(static_cast<int>(axis))}));
  }
  signatures.push_back(AllPartial(1, 1));
  return signatures;
}

}  // namespace

void AddShapeOps(OpRegistry& registry) {
  OpDefinition reshape;
  reshape.type = "reshape";
  reshape.input_names = {"x"};
  reshape.output_names = {"y"};
  reshape.attributes = {RequiredAttribute("shape", AttributeKind::kInts)};
  reshape.infer = InferReshape;
  reshape.gradient = ReshapeGradient;
  reshape.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 0); };
  reshape.sbp_signatures = ReshapeSignatures;
  reshape.localize = LocalizeOutputShape;
  registry.Add(reshape);

  OpDefinition transpose;
  transpose.type = "transpose";
  transpose.input_names = {"x"};
  transpose.output_names = {"y"};
  transpose.attributes = {RequiredAttribute("perm", AttributeKind::kInts)};
  transpose.infer = InferTranspose;
  transpose.gradient = TransposeGradient;
  transpose.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 0); };
  transpose.sbp_signatures = TransposeSignatures;
  registry.Add(transpose);
}

}  // namespace compiler
}  // namespace softwire
