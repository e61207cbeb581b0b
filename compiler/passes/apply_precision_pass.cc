// apply_precision: the job's precision policy (docs/PRECISION.md), after autodiff and the
// optimizer, so forward and backward products are treated alike and no gradient flows
// through a cast.
//
// Under bf16 every float32 input of a matmul, batch_matmul or convolution (conv2d and its two
// gradients; not a conv2d bias) is read through a cast to
// bfloat16, one cast per tensor whatever the number of products reading it:
// - a variable's cast reads only a per-step value, so infer_periods makes it per step: the
//   bf16 copy of a weight is made once per step, not once per micro-batch, and the float32
//   variable stays the master copy the optimizer updates;
// - an activation read by its forward product and by the weight gradient's product has one
//   bf16 copy, which is what the backward pass keeps: the activation saved for backward is
//   bfloat16 where its consumer is a bf16 product. A reshape that only feeds products (the
//   weight gradient's flatten of a rank-3 input) reshapes the bf16 copy instead of making one.
// Products write float32, so softmax, layer norm, losses, reductions, gradients' sums and the
// optimizer update read float32 as before.
#include <map>

#include "base/cpu_features.h"
#include "compiler/ops/graph_builder.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

bool IsProduct(const std::string& type) {
  return type == "matmul" || type == "batch_matmul" || type == "conv2d" ||
         type == "conv2d_grad_input" || type == "conv2d_grad_filter";
}

// The policy: --precision over the job's field; AUTO resolved against the cpu.
PrecisionChoice ResolvePrecision(const Compilation& compilation) {
  PrecisionChoice choice;
  proto::Precision asked = compilation.options().precision;
  std::string source;
  if (asked != proto::PRECISION_UNSPECIFIED) {
    source = "--precision";
  } else {
    asked = compilation.job().precision();
    source = "the job's precision";
  }
  switch (asked) {
    case proto::PRECISION_BF16:
      choice.precision = proto::PRECISION_BF16;
      choice.reason = source == "--precision" ? "--precision bf16" : source;
      break;
    case proto::PRECISION_AUTO: {
      const CpuFeatures cpu = DetectCpuFeatures();
      const bool native = compilation.options().NativeBf16();
      const bool forced = compilation.options().native_bf16.has_value();
      choice.precision = native ? proto::PRECISION_BF16 : proto::PRECISION_FLOAT32;
      choice.reason = std::string("auto: ") +
                      (forced   ? (native ? "native bf16 assumed" : "native bf16 ruled out")
                       : native ? "this cpu has " + cpu.Summary()
                                : "this cpu lacks " + cpu.MissingForBf16());
      break;
    }
    case proto::PRECISION_FLOAT32:
      choice.reason = source == "--precision" ? "--precision float32" : source;
      break;
    default:
      break;  // Unspecified everywhere: float32, the default.
  }
  return choice;
}

class PrecisionRewriter {
 public:
  explicit PrecisionRewriter(Compilation& compilation)
      : compilation_(compilation),
        graph_(compilation.graph),
        builder_(compilation.graph, compilation.registry()) {}

  Status Run() {
    const int op_count = graph_.op_count();  // Casts added below are not products.
    for (OpId id = 0; id < op_count; ++id) {
      if (!IsProduct(graph_.op(id).type)) continue;
      for (int input = 0; input < 2; ++input) SOFTWIRE_RETURN_IF_ERROR(ReadInBFloat16(id, input));
      // Both inputs bf16 now: the output type does not change (float32), but check it.
      SOFTWIRE_RETURN_IF_ERROR(InferOpOutputs(compilation_.registry(), graph_, id));
    }
    return Status::Ok();
  }

 private:
  Status ReadInBFloat16(OpId product, int input) {
    const TensorId tensor = graph_.op(product).inputs[input];
    if (graph_.tensor(tensor).type.dtype != DType::kFloat32) return Status::Ok();
    const OpId producer = graph_.tensor(tensor).producer;
    if (graph_.op(producer).type == "reshape" && OnlyProductsRead(tensor)) {
      // Reshape the bf16 copy of the reshape's input instead.
      SOFTWIRE_ASSIGN_OR_RETURN(TensorId copy, BFloat16CopyOf(graph_.op(producer).inputs[0]));
      graph_.ReplaceInput(producer, 0, copy);
      return InferOpOutputs(compilation_.registry(), graph_, producer);
    }
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId copy, BFloat16CopyOf(tensor));
    graph_.ReplaceInput(product, input, copy);
    return Status::Ok();
  }

  bool OnlyProductsRead(TensorId tensor) const {
    for (const TensorUse& use : graph_.tensor(tensor).consumers) {
      if (!IsProduct(graph_.op(use.op).type)) return false;
    }
    return true;
  }

  // The one cast of `tensor` to bfloat16, made on first use: "<tensor>.bf16".
  StatusOr<TensorId> BFloat16CopyOf(TensorId tensor) {
    auto found = copies_.find(tensor);
    if (found != copies_.end()) return found->second;
    AttributeMap attributes;
    attributes.Set("dtype", std::string("bfloat16"));
    const LogicalOp& producer = graph_.op(graph_.tensor(tensor).producer);
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId copy,
                              builder_.AddSingleOutput(graph_.tensor(tensor).name + ".bf16", "cast",
                                                       {tensor}, attributes, producer.gradient_of));
    // Emitted right after what it converts.
    graph_.mutable_op(graph_.tensor(copy).producer).sequence = producer.sequence + 0.25;
    copies_[tensor] = copy;
    ++compilation_.precision.casts;
    return copy;
  }

  Compilation& compilation_;
  LogicalGraph& graph_;
  GraphBuilder builder_;
  std::map<TensorId, TensorId> copies_;  // float32 tensor -> its bf16 copy.
};

}  // namespace

Status ApplyPrecisionPass(Compilation& compilation) {
  compilation.precision = ResolvePrecision(compilation);
  if (compilation.precision.precision != proto::PRECISION_BF16) return Status::Ok();
  return PrecisionRewriter(compilation).Run();
}

}  // namespace compiler
}  // namespace softwire
