// reduce_sum and reduce_mean (docs/OPS.md).
#include <algorithm>

#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

Status InferReduce(InferenceContext& context) {
  SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(0, DType::kFloat32));
  const Shape& x = context.input_shape(0);
  SOFTWIRE_ASSIGN_OR_RETURN(
      std::vector<int> axes,
      NormalizeAxes(context.attributes().GetInts("axes"), x.rank(), "axes", true));
  bool keepdims = context.attributes().GetBool("keepdims");
  std::vector<int64_t> dims;
  for (int axis = 0; axis < x.rank(); ++axis) {
    bool reduced = std::find(axes.begin(), axes.end(), axis) != axes.end();
    if (!reduced) {
      dims.push_back(x.dim(axis));
    } else if (keepdims) {
      dims.push_back(1);
    }
  }
  context.SetOutput(0, Float32(Shape(std::move(dims))));
  return Status::Ok();
}

// dx = broadcast_axes(dy, shape(x), axes); reduce_mean first scales dy by 1 / count (on the
// smaller tensor).
Status ReduceGradient(GradientBuilder& g, bool mean) {
  if (!g.wants(0)) return Status::Ok();
  const Shape& x = g.shape(g.input(0));
  StatusOr<std::vector<int>> axes =
      NormalizeAxes(g.attributes().GetInts("axes"), x.rank(), "axes", true);
  CHECK(axes.ok()) << axes.status();
  TensorId dy = g.output_gradient(0);
  if (mean) {
    int64_t count = 1;
    for (int axis : *axes) count *= x.dim(axis);
    SOFTWIRE_ASSIGN_OR_RETURN(dy, g.Add("x.scale", "scale", {dy},
                                        Attributes("factor", 1.0 / static_cast<double>(count))));
  }
  AttributeMap attributes;
  attributes.Set("shape", x.dims());
  attributes.Set("axes", std::vector<int64_t>(axes->begin(), axes->end()));
  SOFTWIRE_ASSIGN_OR_RETURN(TensorId dx, g.Add("x", "broadcast_axes", {dy}, attributes));
  g.SetInputGradient(0, dx);
  return Status::Ok();
}

std::vector<int> ReducedAxes(const OpSignature& op) {
  StatusOr<std::vector<int>> axes =
      NormalizeAxes(op.attributes.GetInts("axes"), op.inputs[0].shape.rank(), "axes", true);
  CHECK(axes.ok()) << axes.status();
  return *axes;
}

// A split kept axis stays split (at its place in y); a split reduced axis leaves partial sums.
std::vector<SbpSignature> ReduceSignatures(const OpSignature& op) {
  const std::vector<int> reduced = ReducedAxes(op);
  const bool keepdims = op.attributes.GetBool("keepdims");
  std::vector<SbpSignature> signatures;
  int output_axis = 0;
  for (int axis = 0; axis < op.inputs[0].shape.rank(); ++axis) {
    bool is_reduced = std::find(reduced.begin(), reduced.end(), axis) != reduced.end();
    if (is_reduced) {
      signatures.push_back(Signature({S(axis)}, {kP}));
      if (keepdims) ++output_axis;
    } else {
      signatures.push_back(Signature({S(axis)}, {S(output_axis++)}));
    }
  }
  signatures.push_back(AllPartial(1, 1));
  return signatures;
}

// docs/OPS.md "Physical attributes": where a reduced axis is split, the local mean divides by
// the logical count so the parts are partial sums of the mean.
void LocalizeReduceMean(PhysicalContext& context) {
  int64_t logical = context.logical_inputs[0].NumElements() /
                    std::max<int64_t>(1, context.logical_outputs[0].NumElements());
  int64_t local = context.local_inputs[0].NumElements() /
                  std::max<int64_t>(1, context.local_outputs[0].NumElements());
  if (local != logical) context.attributes.Set("divisor", logical);
}

OpDefinition Reduce(const std::string& type, bool mean) {
  OpDefinition definition;
  definition.type = type;
  definition.input_names = {"x"};
  definition.output_names = {"y"};
  definition.attributes = {AttributeWithDefault("axes", AttributeValue(std::vector<int64_t>{})),
                           AttributeWithDefault("keepdims", AttributeValue(false))};
  definition.infer = InferReduce;
  definition.gradient = [mean](GradientBuilder& g) { return ReduceGradient(g, mean); };
  definition.cost = [](const OpSignature& signature) {
    return OpCost{static_cast<double>(signature.inputs[0].NumElements()), TouchedBytes(signature)};
  };
  definition.sbp_signatures = ReduceSignatures;
  if (mean) definition.localize = LocalizeReduceMean;
  return definition;
}

}  // namespace

void AddReduceOps(OpRegistry& registry) {
  registry.Add(Reduce("reduce_sum", false));
  registry.Add(Reduce("reduce_mean", true));
}

}  // namespace compiler
}  // namespace softwire
