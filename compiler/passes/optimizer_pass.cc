// optimizer: one update op per trainable variable, reading the step's gradient (phase 0) and
// updating the variable in place (phase 1), with the attributes of docs/OPS.md.
#include "compiler/ops/graph_builder.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

// `value`, or `fallback` when the job left it 0 (job.proto: "0 means 0.9").
double OrDefault(double value, double fallback) {
  return value == 0 ? fallback : value;
}

Status CheckRange(const Compilation& compilation, const std::string& field, double value,
                  bool below_one) {
  bool ok = value >= 0 && (!below_one || value < 1);
  if (ok) return Status::Ok();
  return compilation.ErrorAt(compilation.job_file().train_line,
                             "train.optimizer." + field + " must be " +
                                 (below_one ? "in [0, 1)" : ">= 0") + ", got " +
                                 AttributeValueToString(value));
}

struct UpdateRule {
  std::string type;
  AttributeMap attributes;
};

StatusOr<UpdateRule> SgdRule(const Compilation& compilation, const proto::SgdOptimizer& sgd) {
  SOFTWIRE_RETURN_IF_ERROR(
      CheckRange(compilation, "sgd.learning_rate", sgd.learning_rate(), false));
  SOFTWIRE_RETURN_IF_ERROR(CheckRange(compilation, "sgd.momentum", sgd.momentum(), true));
  SOFTWIRE_RETURN_IF_ERROR(CheckRange(compilation, "sgd.weight_decay", sgd.weight_decay(), false));
  UpdateRule rule{"sgd_update", {}};
  rule.attributes.Set("learning_rate", sgd.learning_rate());
  rule.attributes.Set("momentum", sgd.momentum());
  rule.attributes.Set("weight_decay", sgd.weight_decay());
  return rule;
}

StatusOr<UpdateRule> AdamRule(const Compilation& compilation, const proto::AdamOptimizer& adam) {
  double beta1 = OrDefault(adam.beta1(), 0.9);
  double beta2 = OrDefault(adam.beta2(), 0.999);
  double epsilon = OrDefault(adam.epsilon(), 1e-8);
  SOFTWIRE_RETURN_IF_ERROR(
      CheckRange(compilation, "adam.learning_rate", adam.learning_rate(), false));
  SOFTWIRE_RETURN_IF_ERROR(CheckRange(compilation, "adam.beta1", beta1, true));
  SOFTWIRE_RETURN_IF_ERROR(CheckRange(compilation, "adam.beta2", beta2, true));
  SOFTWIRE_RETURN_IF_ERROR(
      CheckRange(compilation, "adam.weight_decay", adam.weight_decay(), false));
  if (epsilon <= 0) {
    return compilation.ErrorAt(compilation.job_file().train_line,
                               "train.optimizer.adam.epsilon must be > 0");
  }
  UpdateRule rule{"adam_update", {}};
  rule.attributes.Set("learning_rate", adam.learning_rate());
  rule.attributes.Set("beta1", beta1);
  rule.attributes.Set("beta2", beta2);
  rule.attributes.Set("epsilon", epsilon);
  rule.attributes.Set("weight_decay", adam.weight_decay());
  return rule;
}

StatusOr<UpdateRule> RuleOf(const Compilation& compilation) {
  const proto::Optimizer& optimizer = compilation.job().train().optimizer();
  switch (optimizer.kind_case()) {
    case proto::Optimizer::kSgd:
      return SgdRule(compilation, optimizer.sgd());
    case proto::Optimizer::kAdam:
      return AdamRule(compilation, optimizer.adam());
    case proto::Optimizer::KIND_NOT_SET:
      break;
  }
  return compilation.ErrorAt(compilation.job_file().train_line,
                             "train.optimizer is not set (sgd or adam)");
}

}  // namespace

Status OptimizerPass(Compilation& compilation) {
  if (!compilation.schedule.training) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(UpdateRule rule, RuleOf(compilation));
  rule.attributes.Set("gradient_scale",
                      1.0 / static_cast<double>(compilation.schedule.pieces_per_step));
  GraphBuilder builder(compilation.graph, compilation.registry());
  for (const auto& [variable, gradient] : compilation.step_gradients) {
    OpRequest request;
    request.name = compilation.graph.tensor(variable).name + ".update";
    request.type = rule.type;
    request.inputs = {gradient, variable};
    request.attributes = rule.attributes;
    SOFTWIRE_RETURN_IF_ERROR(builder.Add(request).status());
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
