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
//
// Activations between convolutions stay bfloat16 (activation_precision.h): the image tensors
// that batch_norm, relu, add, add_n and their gradients tie to a convolution's output (forward
// or input gradient) are stored in bf16; the convolutions write them so (output_dtype), the
// ops between compute in float32 and store bf16, and readers that take float32 only read a
// float32 cast (`<tensor>.float32`). Weight gradients and the optimizer stay float32.
#include <map>
#include <set>

#include "base/cpu_features.h"
#include "compiler/ops/graph_builder.h"
#include "compiler/passes/activation_precision.h"
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
    const ActivationPrecision activations = compilation_.options().bf16_activations
                                                ? ChooseActivationPrecision(graph_)
                                                : ActivationPrecision();
    kept_ = std::set<TensorId>(activations.stored.begin(), activations.stored.end());
    for (TensorId tensor : activations.stored) {
      const OpId producer = graph_.tensor(tensor).producer;
      if (IsConvolutionWritingActivations(graph_.op(producer).type)) {
        graph_.mutable_op(producer).attributes.Set("output_dtype", std::string("bfloat16"));
        changed_ops_.insert(producer);
      }
      compilation_.precision.activations.push_back(
          {graph_.tensor(tensor).name, activations.reason.at(tensor)});
      SOFTWIRE_RETURN_IF_ERROR(ReadInFloat32WhereNeeded(tensor));
    }
    for (TensorId tensor : activations.widened)
      SOFTWIRE_RETURN_IF_ERROR(ReadInBFloat16InGroup(tensor));
    for (OpId id = 0; id < op_count; ++id) {
      if (!IsProduct(graph_.op(id).type)) continue;
      for (int input = 0; input < 2; ++input) SOFTWIRE_RETURN_IF_ERROR(ReadInBFloat16(id, input));
    }
    return InferChangedTypes();
  }

 private:
  // Infers again, in order, every op whose inputs or attributes changed and every op reading a
  // tensor whose type that changed (convolutions write bf16, the ops between follow their
  // inputs, products and casts check their operands).
  Status InferChangedTypes() {
    SOFTWIRE_ASSIGN_OR_RETURN(std::vector<OpId> order, graph_.TopologicalOrder());
    std::set<TensorId> changed;
    for (OpId id : order) {
      const LogicalOp& op = graph_.op(id);
      bool stale = changed_ops_.count(id) > 0;
      for (TensorId input : op.inputs) stale |= changed.count(input) > 0;
      if (!stale) continue;
      std::vector<TensorType> before;
      for (TensorId output : op.outputs) before.push_back(graph_.tensor(output).type);
      SOFTWIRE_RETURN_IF_ERROR(InferOpOutputs(compilation_.registry(), graph_, id));
      for (size_t k = 0; k < op.outputs.size(); ++k) {
        if (!(graph_.tensor(op.outputs[k]).type == before[k])) changed.insert(op.outputs[k]);
      }
    }
    return Status::Ok();
  }

  void Replace(OpId op, int input, TensorId tensor) {
    graph_.ReplaceInput(op, input, tensor);
    changed_ops_.insert(op);
  }
  // Readers of a bf16 activation that take float32 only read one float32 cast of it.
  Status ReadInFloat32WhereNeeded(TensorId tensor) {
    const std::vector<TensorUse> uses = graph_.tensor(tensor).consumers;
    for (const TensorUse& use : uses) {
      if (ReadsBFloat16Activation(graph_, use)) continue;
      SOFTWIRE_ASSIGN_OR_RETURN(TensorId copy, CopyOf(tensor, "float32", float32_copies_));
      Replace(use.op, use.input_index, copy);
    }
    return Status::Ok();
  }

  // A float32 member of a bf16 group (written by an op that writes float32 only, such as
  // global_avg_pool_grad): the group's ops read its bf16 cast.
  Status ReadInBFloat16InGroup(TensorId tensor) {
    const std::vector<TensorUse> uses = graph_.tensor(tensor).consumers;
    for (const TensorUse& use : uses) {
      if (!IsActivationGroupInput(graph_, use)) continue;
      SOFTWIRE_ASSIGN_OR_RETURN(TensorId copy, BFloat16CopyOf(tensor));
      Replace(use.op, use.input_index, copy);
    }
    return Status::Ok();
  }

  Status ReadInBFloat16(OpId product, int input) {
    const TensorId tensor = graph_.op(product).inputs[input];
    if (graph_.tensor(tensor).type.dtype != DType::kFloat32) return Status::Ok();
    if (kept_.count(tensor) > 0) return Status::Ok();  // Written in bf16 already.
    const OpId producer = graph_.tensor(tensor).producer;
    if (graph_.op(producer).type == "reshape" && OnlyProductsRead(tensor)) {
      // Reshape the bf16 copy of the reshape's input instead.
      SOFTWIRE_ASSIGN_OR_RETURN(TensorId copy, BFloat16CopyOf(graph_.op(producer).inputs[0]));
      Replace(producer, 0, copy);
      return Status::Ok();
    }
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId copy, BFloat16CopyOf(tensor));
    Replace(product, input, copy);
    return Status::Ok();
  }

  bool OnlyProductsRead(TensorId tensor) const {
    for (const TensorUse& use : graph_.tensor(tensor).consumers) {
      if (!IsProduct(graph_.op(use.op).type)) return false;
    }
    return true;
  }

  // The one cast of `tensor` to bfloat16, made on first use: "<tensor>.bf16".
  StatusOr<TensorId> BFloat16CopyOf(TensorId tensor) { return CopyOf(tensor, "bfloat16", copies_); }

  // The one cast of `tensor` to `dtype`, made on first use: "<tensor>.bf16" or
  // "<tensor>.float32".
  StatusOr<TensorId> CopyOf(TensorId tensor, const std::string& dtype,
                            std::map<TensorId, TensorId>& copies) {
    auto found = copies.find(tensor);
    if (found != copies.end()) return found->second;
    AttributeMap attributes;
    attributes.Set("dtype", dtype);
    const LogicalOp& producer = graph_.op(graph_.tensor(tensor).producer);
    const std::string suffix = dtype == "bfloat16" ? ".bf16" : ".float32";
    SOFTWIRE_ASSIGN_OR_RETURN(TensorId copy,
                              builder_.AddSingleOutput(graph_.tensor(tensor).name + suffix, "cast",
                                                       {tensor}, attributes, producer.gradient_of));
    // Emitted right after what it converts.
    graph_.mutable_op(graph_.tensor(copy).producer).sequence = producer.sequence + 0.25;
    copies[tensor] = copy;
    ++compilation_.precision.casts;
    return copy;
  }

  Compilation& compilation_;
  LogicalGraph& graph_;
  GraphBuilder builder_;
  std::map<TensorId, TensorId> copies_;          // float32 tensor -> its bf16 copy.
  std::map<TensorId, TensorId> float32_copies_;  // bf16 activation -> its float32 copy.
  std::set<TensorId> kept_;                      // Activations stored in bf16.
  std::set<OpId> changed_ops_;                   // Inputs replaced or attributes set.
};

}  // namespace

Status ApplyPrecisionPass(Compilation& compilation) {
  compilation.precision = ResolvePrecision(compilation);
  if (compilation.precision.precision != proto::PRECISION_BF16) return Status::Ok();
  return PrecisionRewriter(compilation).Run();
}

}  // namespace compiler
}  // namespace softwire
