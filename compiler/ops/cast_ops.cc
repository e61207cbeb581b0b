// cast (docs/OPS.md): the conversions the precision policy inserts between float32 and
// bfloat16 (docs/PRECISION.md).
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

bool IsFloatingPoint(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kBFloat16;
}

Status InferCast(InferenceContext& context) {
  const std::string& name = context.attributes().GetString("dtype");
  StatusOr<DType> dtype = ParseDType(name);
  if (!dtype.ok() || !IsFloatingPoint(*dtype)) {
    return InvalidArgumentError("attribute 'dtype' must be \"float32\" or \"bfloat16\", not \"" +
                                name + "\"");
  }
  if (!IsFloatingPoint(context.input(0).dtype)) {
    return InvalidArgumentError(context.InputLabel(0) + " must be float32 or bfloat16, got " +
                                context.input(0).ToString());
  }
  context.SetOutput(0, TensorType{*dtype, context.input_shape(0), context.input(0).layout});
  return Status::Ok();
}

}  // namespace

void AddCastOps(OpRegistry& registry) {
  OpDefinition cast;
  cast.type = "cast";
  cast.usage = OpUsage::kInternal;
  cast.input_names = {"x"};
  cast.output_names = {"y"};
  cast.attributes = {RequiredAttribute("dtype", AttributeKind::kString)};
  cast.infer = InferCast;
  // No gradient: the precision pass inserts casts after autodiff (docs/PRECISION.md).
  // A cast the fold_weight_casts pass made `first_firing_only` casts on the first step alone:
  // later steps, which the cost model times, cost it nothing (the update writes the copy).
  cast.cost = [](const OpSignature& signature) {
    if (signature.attributes.Contains("first_firing_only")) return OpCost{0.0, 0.0};
    return ElementwiseCost(signature, 1);
  };
  // Splits only: a rounded sum of partial values is not the sum of their roundings, so a cast
  // never runs on partial values.
  cast.sbp_signatures = BroadcastingSplits;
  registry.Add(cast);
}

}  // namespace compiler
}  // namespace softwire
