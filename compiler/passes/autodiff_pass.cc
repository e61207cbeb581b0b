// autodiff: reverse-mode gradients of the loss with respect to every trainable variable.
//
// Only tensors that lie on a path from a trainable variable to the loss, and are float32, get
// gradients; everything else (the first layer's input, labels, ids, frozen parameters) is
// pruned before any backward op is built. Ops are visited in reverse topological order, so by
// the time an op is differentiated every consumer of its outputs has contributed; several
// contributions to one tensor are summed by one add_n named "<tensor>.grad".
#include <map>
#include <optional>
#include <vector>

#include "compiler/ops/gradient_builder.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

class ReverseModeDifferentiator {
 public:
  explicit ReverseModeDifferentiator(Compilation& compilation)
      : compilation_(compilation),
        graph_(compilation.graph),
        builder_(compilation.graph, compilation.registry()) {}

  Status Run() {
    loss_ = *graph_.FindTensor(compilation_.job().train().loss());
    SOFTWIRE_ASSIGN_OR_RETURN(std::vector<OpId> order, graph_.TopologicalOrder());
    std::vector<TensorId> variables = TrainableVariables();
    MarkTensorsNeedingGradients(variables);
    SOFTWIRE_RETURN_IF_ERROR(CheckEveryVariableReachesLoss(variables));
    SOFTWIRE_RETURN_IF_ERROR(SeedLossGradient());
    for (auto op = order.rbegin(); op != order.rend(); ++op) {
      SOFTWIRE_RETURN_IF_ERROR(Differentiate(*op));
    }
    for (TensorId variable : variables) {
      SOFTWIRE_ASSIGN_OR_RETURN(std::optional<TensorId> gradient, GradientOf(variable));
      CHECK(gradient.has_value()) << "variable '" << graph_.tensor(variable).name
                                  << "' reaches the loss but got no gradient";
      compilation_.variable_gradients[variable] = *gradient;
    }
    return Status::Ok();
  }

 private:
  std::vector<TensorId> TrainableVariables() const {
    std::map<std::string, bool> frozen;
    for (const proto::Variable& variable : compilation_.job().variable()) {
      frozen[variable.name()] = variable.frozen();
    }
    std::vector<TensorId> variables;
    for (const LogicalOp& op : graph_.ops()) {
      if (op.type == "variable" && !frozen.at(op.name)) variables.push_back(op.outputs[0]);
    }
    return variables;
  }

  // needs_gradient_[t]: t is float32, depends on a trainable variable, and the loss depends
  // on t.
  void MarkTensorsNeedingGradients(const std::vector<TensorId>& variables) {
    std::vector<bool> from_variable(graph_.tensor_count(), false);
    for (TensorId variable : variables) from_variable[variable] = true;
    std::vector<OpId> order = *graph_.TopologicalOrder();
    for (OpId id : order) {
      const LogicalOp& op = graph_.op(id);
      bool reached = false;
      for (TensorId input : op.inputs) reached = reached || from_variable[input];
      for (TensorId output : op.outputs) from_variable[output] = from_variable[output] || reached;
    }
    std::vector<bool> to_loss(graph_.tensor_count(), false);
    to_loss[loss_] = true;
    for (auto id = order.rbegin(); id != order.rend(); ++id) {
      const LogicalOp& op = graph_.op(*id);
      bool reaches = false;
      for (TensorId output : op.outputs) reaches = reaches || to_loss[output];
      for (TensorId input : op.inputs) to_loss[input] = to_loss[input] || reaches;
    }
    needs_gradient_.assign(graph_.tensor_count(), false);
    for (const LogicalTensor& tensor : graph_.tensors()) {
      needs_gradient_[tensor.id] =
          from_variable[tensor.id] && to_loss[tensor.id] && tensor.type.dtype == DType::kFloat32;
    }
  }

  Status CheckEveryVariableReachesLoss(const std::vector<TensorId>& variables) const {
    const std::string& loss = graph_.tensor(loss_).name;
    if (variables.empty()) {
      return compilation_.ErrorAt(compilation_.job_file().train_line,
                                  "train: the job has no trainable variable");
    }
    for (TensorId variable : variables) {
      if (needs_gradient_[variable]) continue;
      const LogicalOp& op = graph_.op(graph_.tensor(variable).producer);
      return compilation_.ErrorAt(op.line, "variable '" + op.name + "': the loss '" + loss +
                                               "' does not depend on it; mark it "
                                               "`frozen: true` or use it");
    }
    return Status::Ok();
  }

  Status SeedLossGradient() {
    AttributeMap attributes;
    attributes.Set("shape", std::vector<int64_t>{});
    attributes.Set("value", 1.0);
    SOFTWIRE_ASSIGN_OR_RETURN(
        TensorId seed,
        builder_.AddSingleOutput(graph_.tensor(loss_).name + ".grad", "fill", {}, attributes, ""));
    compilation_.gradient_sums[graph_.tensor(seed).producer] = loss_;
    contributions_[loss_].push_back(seed);
    return Status::Ok();
  }

  // The gradient of `tensor`: its single contribution, the add_n of several, or none.
  StatusOr<std::optional<TensorId>> GradientOf(TensorId tensor) {
    auto summed = summed_.find(tensor);
    if (summed != summed_.end()) return std::optional<TensorId>(summed->second);
    const std::vector<TensorId>& parts = contributions_[tensor];
    if (parts.empty()) return std::optional<TensorId>();
    TensorId gradient = parts[0];
    if (parts.size() > 1) {
      SOFTWIRE_ASSIGN_OR_RETURN(
          gradient,
          builder_.AddSingleOutput(graph_.tensor(tensor).name + ".grad", "add_n", parts, {}, ""));
      compilation_.gradient_sums[graph_.tensor(gradient).producer] = tensor;
    }
    summed_[tensor] = gradient;
    return std::optional<TensorId>(gradient);
  }

  // Builds the backward ops of `id` when it lies on a path from a trainable variable to the
  // loss: an output needs a gradient and so does an input.
  Status Differentiate(OpId id) {
    const LogicalOp& op = graph_.op(id);
    bool on_path = false;
    for (TensorId output : op.outputs) on_path = on_path || needs_gradient_[output];
    if (!on_path) return Status::Ok();
    std::vector<bool> wanted;
    bool any_wanted = false;
    for (TensorId input : op.inputs) {
      wanted.push_back(needs_gradient_[input]);
      any_wanted = any_wanted || needs_gradient_[input];
    }
    if (!any_wanted) return Status::Ok();
    const OpDefinition* definition = compilation_.registry().Find(op.type);
    if (!definition->gradient) {
      return compilation_.OpError(id, "type '" + op.type +
                                          "' has no gradient, but it lies "
                                          "between trainable variables and the loss '" +
                                          graph_.tensor(loss_).name + "'");
    }
    std::vector<std::optional<TensorId>> output_gradients;
    for (TensorId output : op.outputs) {
      SOFTWIRE_ASSIGN_OR_RETURN(std::optional<TensorId> gradient, GradientOf(output));
      output_gradients.push_back(gradient);
    }
    GradientBuilder gradients(builder_, id, std::move(output_gradients), wanted);
    SOFTWIRE_RETURN_IF_ERROR(definition->gradient(gradients));
    return CollectInputGradients(gradients, wanted);
  }

  Status CollectInputGradients(const GradientBuilder& gradients, const std::vector<bool>& wanted) {
    const LogicalOp& op = gradients.forward();
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (!wanted[i]) continue;
      const std::optional<TensorId>& gradient = gradients.input_gradients()[i];
      if (!gradient.has_value()) {
        return InternalError("gradient rule of '" + op.type + "' left input " + std::to_string(i) +
                             " of op '" + op.name + "' without gradient");
      }
      contributions_[op.inputs[i]].push_back(*gradient);
    }
    return Status::Ok();
  }

  Compilation& compilation_;
  LogicalGraph& graph_;
  GraphBuilder builder_;
  TensorId loss_ = -1;
  std::vector<bool> needs_gradient_;
  std::map<TensorId, std::vector<TensorId>> contributions_;
  std::map<TensorId, TensorId> summed_;
};

}  // namespace

Status AutodiffPass(Compilation& compilation) {
  compilation.backward_ops_begin = compilation.graph.op_count();
  compilation.backward_ops_end = compilation.graph.op_count();
  if (!compilation.schedule.training) return Status::Ok();
  SOFTWIRE_RETURN_IF_ERROR(ReverseModeDifferentiator(compilation).Run());
  compilation.backward_ops_end = compilation.graph.op_count();
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
