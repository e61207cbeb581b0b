// The transfer and boxing ops of docs/OPS.md: copy, slice, assemble, flat_split, flat_concat.
// The boxing pass makes them (as physical copy and boxing actors); users may write them too.
#include <numeric>

#include "compiler/ops/gradient_builder.h"
#include "compiler/ops/op_registry.h"
#include "compiler/ops/sbp_signatures.h"
#include "compiler/ops/shape_helpers.h"

namespace softwire {
namespace compiler {
namespace {

Status InferCopy(InferenceContext& context) {
  context.SetOutput(0, context.input(0));
  return Status::Ok();
}

Status CopyGradient(GradientBuilder& g) {
  if (g.wants(0)) g.SetInputGradient(0, g.output_gradient(0));
  return Status::Ok();
}

// begin and end: one entry per axis of x, 0 <= begin < end <= extent.
Status InferSlice(InferenceContext& context) {
  const Shape& x = context.input_shape(0);
  const std::vector<int64_t>& begin = context.attributes().GetInts("begin");
  const std::vector<int64_t>& end = context.attributes().GetInts("end");
  if (static_cast<int>(begin.size()) != x.rank() || static_cast<int>(end.size()) != x.rank()) {
    return InvalidArgumentError(
        "attributes 'begin' and 'end' need one entry per axis of input "
        "'x' " +
        context.input(0).ToString());
  }
  std::vector<int64_t> dims;
  for (int axis = 0; axis < x.rank(); ++axis) {
    if (begin[axis] < 0 || begin[axis] >= end[axis] || end[axis] > x.dim(axis)) {
      return InvalidArgumentError("axis " + std::to_string(axis) + ": slice [" +
                                  std::to_string(begin[axis]) + ", " + std::to_string(end[axis]) +
                                  ") is not within [0, " + std::to_string(x.dim(axis)) + ")");
    }
    dims.push_back(end[axis] - begin[axis]);
  }
  context.SetOutput(0, TensorType{context.input(0).dtype, Shape(std::move(dims))});
  return Status::Ok();
}

// Inputs are blocks of y at `offsets` (rank(y) entries per input), all of y's dtype.
Status InferAssemble(InferenceContext& context) {
  Shape shape(context.attributes().GetInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(CheckPositiveDims(shape.dims(), "shape"));
  const std::vector<int64_t>& offsets = context.attributes().GetInts("offsets");
  const size_t rank = static_cast<size_t>(shape.rank());
  if (offsets.size() != rank * context.input_count()) {
    return InvalidArgumentError(
        "attribute 'offsets' needs " + std::to_string(rank) + " entries per input (" +
        std::to_string(rank * context.input_count()) + "), got " + std::to_string(offsets.size()));
  }
  for (int k = 0; k < context.input_count(); ++k) {
    if (k > 0) SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(k, context.input(0).dtype));
    SOFTWIRE_RETURN_IF_ERROR(context.RequireRank(k, shape.rank()));
    for (size_t axis = 0; axis < rank; ++axis) {
      const int64_t offset = offsets[k * rank + axis];
      if (offset < 0 || offset + context.input_shape(k).dim(static_cast<int>(axis)) >
                            shape.dim(static_cast<int>(axis))) {
        return InvalidArgumentError(context.InputLabel(k) + " " + context.input(k).ToString() +
                                    " at offset " + std::to_string(offset) + " of axis " +
                                    std::to_string(axis) + " does not fit in " + shape.ToString());
      }
    }
  }
  context.SetOutput(0, TensorType{context.input(0).dtype, std::move(shape)});
  return Status::Ok();
}

// One 1-D output per entry of `sizes`, which sum to x's element count.
Status InferFlatSplit(InferenceContext& context) {
  const std::vector<int64_t>& sizes = context.attributes().GetInts("sizes");
  SOFTWIRE_RETURN_IF_ERROR(CheckPositiveDims(sizes, "sizes"));
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  if (total != context.input(0).NumElements()) {
    return InvalidArgumentError("attribute 'sizes' sums to " + std::to_string(total) +
                                " but input 'x' " + context.input(0).ToString() + " has " +
                                std::to_string(context.input(0).NumElements()) + " elements");
  }
  if (static_cast<int>(sizes.size()) != context.output_count()) {
    return InvalidArgumentError("attribute 'sizes' has " + std::to_string(sizes.size()) +
                                " entries for " + std::to_string(context.output_count()) +
                                " outputs");
  }
  for (size_t k = 0; k < sizes.size(); ++k) {
    context.SetOutput(static_cast<int>(k), TensorType{context.input(0).dtype, Shape({sizes[k]})});
  }
  return Status::Ok();
}

// 1-D inputs whose sizes sum to the element count of `shape`.
Status InferFlatConcat(InferenceContext& context) {
  Shape shape(context.attributes().GetInts("shape"));
  SOFTWIRE_RETURN_IF_ERROR(CheckPositiveDims(shape.dims(), "shape"));
  int64_t total = 0;
  for (int k = 0; k < context.input_count(); ++k) {
    SOFTWIRE_RETURN_IF_ERROR(context.RequireRank(k, 1));
    if (k > 0) SOFTWIRE_RETURN_IF_ERROR(context.RequireDType(k, context.input(0).dtype));
    total += context.input_shape(k).dim(0);
  }
  if (total != shape.NumElements()) {
    return InvalidArgumentError("inputs hold " + std::to_string(total) +
                                " elements but attribute "
                                "'shape' " +
                                shape.ToString() + " needs " + std::to_string(shape.NumElements()));
  }
  context.SetOutput(0, TensorType{context.input(0).dtype, std::move(shape)});
  return Status::Ok();
}

OpDefinition Transfer(const std::string& type, std::vector<std::string> inputs) {
  OpDefinition definition;
  definition.type = type;
  definition.usage = OpUsage::kInternal;
  definition.input_names = std::move(inputs);
  definition.output_names = {"y"};
  definition.cost = [](const OpSignature& signature) { return ElementwiseCost(signature, 0); };
  return definition;
}

}  // namespace

void AddTransferOps(OpRegistry& registry) {
  OpDefinition copy = Transfer("copy", {"x"});
  copy.infer = InferCopy;
  copy.gradient = CopyGradient;
  copy.sbp_signatures = [](const OpSignature& op) {
    std::vector<SbpSignature> signatures = BroadcastingSplits(op);
    signatures.push_back(AllPartial(1, 1));
    return signatures;
  };
  registry.Add(copy);

  OpDefinition slice = Transfer("slice", {"x"});
  slice.attributes = {RequiredAttribute("begin", AttributeKind::kInts),
                      RequiredAttribute("end", AttributeKind::kInts)};
  slice.infer = InferSlice;
  registry.Add(slice);

  OpDefinition assemble = Transfer("assemble", {"x"});
  assemble.variadic_inputs = true;
  assemble.min_inputs = 1;
  assemble.attributes = {RequiredAttribute("shape", AttributeKind::kInts),
                         RequiredAttribute("offsets", AttributeKind::kInts)};
  assemble.infer = InferAssemble;
  // y = 0, then every block added: one flop per input element, y written.
  assemble.cost = [](const OpSignature& signature) {
    double elements = 0;
    for (const TensorType& input : signature.inputs) elements += input.NumElements();
    return OpCost{elements, TouchedBytes(signature) + signature.outputs[0].NumBytes()};
  };
  registry.Add(assemble);

  OpDefinition flat_split = Transfer("flat_split", {"x"});
  flat_split.variadic_outputs = true;
  flat_split.attributes = {RequiredAttribute("sizes", AttributeKind::kInts)};
  flat_split.infer = InferFlatSplit;
  registry.Add(flat_split);

  OpDefinition flat_concat = Transfer("flat_concat", {"x"});
  flat_concat.variadic_inputs = true;
  flat_concat.min_inputs = 1;
  flat_concat.attributes = {RequiredAttribute("shape", AttributeKind::kInts)};
  flat_concat.infer = InferFlatConcat;
  registry.Add(flat_concat);
}

}  // namespace compiler
}  // namespace softwire
