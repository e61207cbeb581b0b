// reduce_sum and reduce_mean (docs/OPS.md).
#include <algorithm>

#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
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
  return definition;
}

}  // namespace

void AddReduceOps(OpRegistry& registry) {
  registry.Add(Reduce("reduce_sum", false));
  registry.Add(Reduce("reduce_mean", true));
}

}  // namespace compiler
}  // namespace softwire
