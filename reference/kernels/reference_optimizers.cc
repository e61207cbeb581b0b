// sgd_update and adam_update with explicit state and step (reference_kernels.h): inputs are
// (gradient, weight); the updated weight is written to outputs[0], which the caller initialised
// to the current weight; `state` is the optimizer state, `step` is t (1-based).
#include <cmath>

#include "reference/kernels/reference_kernel_families.h"
#include "reference/kernels/reference_op_helpers.h"

namespace softwire {
namespace reference {
namespace {

// Checks (gradient, weight) of one shape, the weight output, and a state of
// `state_per_element` doubles per weight element.
Status CheckUpdate(const ReferenceKernelCall& call, size_t state_per_element) {
  SOFTWIRE_RETURN_IF_ERROR(CheckArity(call, 2, 1));
  const Shape& weight = Input(call, 1).shape;
  if (Input(call, 0).shape != weight) return OpError(call, "gradient must be shaped like weight");
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputShape(call, 0, weight));
  const size_t state_size = state_per_element * static_cast<size_t>(weight.NumElements());
  if (call.state == nullptr || call.state->size() != state_size) {
    return OpError(call, "state must hold " + std::to_string(state_size) + " values");
  }
  if (call.step < 1) return OpError(call, "step must be >= 1");
  return Status::Ok();
}

Status SgdUpdate(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const double learning_rate = attributes.RequiredFloat("learning_rate");
  const double momentum = attributes.Float("momentum", 0);
  const double weight_decay = attributes.Float("weight_decay", 0);
  const double gradient_scale = attributes.Float("gradient_scale", 1);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckUpdate(call, 1));
  const std::vector<double>& gradient = Input(call, 0).values;
  std::vector<double>& weight = Output(call, 0).values;
  std::vector<double>& velocity = *call.state;
  for (size_t i = 0; i < weight.size(); ++i) {
    const double g = gradient_scale * gradient[i] + weight_decay * weight[i];
    velocity[i] = momentum * velocity[i] + g;
    weight[i] -= learning_rate * velocity[i];
  }
  return Status::Ok();
}

Status AdamUpdate(const ReferenceKernelCall& call) {
  KernelAttributes attributes(*call.def);
  const double learning_rate = attributes.RequiredFloat("learning_rate");
  const double beta1 = attributes.Float("beta1", 0.9);
  const double beta2 = attributes.Float("beta2", 0.999);
  const double epsilon = attributes.Float("epsilon", 1e-8);
  const double weight_decay = attributes.Float("weight_decay", 0);
  const double gradient_scale = attributes.Float("gradient_scale", 1);
  SOFTWIRE_RETURN_IF_ERROR(attributes.Finish());
  SOFTWIRE_RETURN_IF_ERROR(CheckUpdate(call, 2));
  const std::vector<double>& gradient = Input(call, 0).values;
  std::vector<double>& weight = Output(call, 0).values;
  const size_t elements = weight.size();
  double* m = call.state->data();             // First moments...
  double* v = call.state->data() + elements;  // ...then second moments.
  const double t = static_cast<double>(call.step);
  for (size_t i = 0; i < elements; ++i) {
    const double g = gradient_scale * gradient[i];
    m[i] = beta1 * m[i] + (1 - beta1) * g;
    v[i] = beta2 * v[i] + (1 - beta2) * g * g;
    const double m_hat = m[i] / (1 - std::pow(beta1, t));
    const double v_hat = v[i] / (1 - std::pow(beta2, t));
    weight[i] -= learning_rate * (m_hat / (std::sqrt(v_hat) + epsilon) + weight_decay * weight[i]);
  }
  return Status::Ok();
}

}  // namespace

void RegisterReferenceOptimizerKernels(ReferenceKernelTable* table) {
  table->Register("sgd_update", SgdUpdate);
  table->Register("adam_update", AdamUpdate);
}

}  // namespace reference
}  // namespace softwire
