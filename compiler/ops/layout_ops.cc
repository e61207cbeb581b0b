// reorder (docs/OPS.md): the same image batch in another layout (base/layout.h,
// docs/LAYOUTS.md). Only the choose_layouts pass inserts it, where a tensor in one layout meets
// a reader that wants another: at the edges of a region of convolutions and at the job's
// boundaries, which stay plain NCHW.
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

Status InferReorder(InferenceContext& context) {
  const std::string& name = context.attributes().GetString("layout");
  StatusOr<Layout> layout = ParseLayout(name);
  if (!layout.ok()) return InvalidArgumentError("attribute 'layout': " + layout.status().message());
  const TensorType& x = context.input(0);
  if (x.dtype != DType::kFloat32 && x.dtype != DType::kBFloat16) {
    return InvalidArgumentError(context.InputLabel(0) + " must be float32 or bfloat16, got " +
                                x.ToString());
  }
  if (!LayoutFits(x.layout, x.shape) || !LayoutFits(*layout, x.shape)) {
    return InvalidArgumentError(context.InputLabel(0) + " " + x.ToString() +
                                " cannot be held in layout " + name);
  }
  context.SetOutput(0, TensorType{x.dtype, x.shape, *layout});
  return Status::Ok();
}

}  // namespace

void AddLayoutOps(OpRegistry& registry) {
  OpDefinition reorder;
  reorder.type = "reorder";
  reorder.usage = OpUsage::kInternal;
  reorder.input_names = {"x"};
  reorder.output_names = {"y"};
  reorder.attributes = {RequiredAttribute("layout", AttributeKind::kString)};
  reorder.infer = InferReorder;
  // No gradient: choose_layouts inserts reorders after autodiff.
  reorder.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 1); };
  // The batch axis is outermost in every layout: a batch split is a split of the bytes.
  reorder.sbp_signatures = [](const OpSignature&) {
    return std::vector<SbpSignature>{Signature({S(0)}, {S(0)})};
  };
  registry.Add(reorder);
}

}  // namespace compiler
}  // namespace softwire
