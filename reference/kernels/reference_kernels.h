// The reference kernels: every op of docs/OPS.md written as plainly as possible, in double
// precision. They define the numbers: the cpu kernels and the whole engine are checked
// against them. Clarity over speed: naive loops, no BLAS, no threads.
//
// Actor-kind kernels whose behaviour depends on firing state (source, variable, accumulate,
// sink) are not here; the reference interpreter does them itself. sgd_update and adam_update
// are here, with their state passed explicitly.
#ifndef SOFTWIRE_REFERENCE_KERNELS_REFERENCE_KERNELS_H_
#define SOFTWIRE_REFERENCE_KERNELS_REFERENCE_KERNELS_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/plan.pb.h"
#include "reference/kernels/reference_tensor.h"

namespace softwire {
namespace reference {

// Computes `outputs` (already sized to the KernelDef's output shapes) from `inputs`.
// For sgd_update / adam_update: inputs are (gradient, weight); `state` holds the optimizer
// state (sized as docs/OPS.md says), `step` is t (1-based); the weight is updated in
// outputs[0], which the caller initialises to the current weight.
struct ReferenceKernelCall {
  const proto::KernelDef* def = nullptr;
  std::vector<const ReferenceTensor*> inputs;
  std::vector<ReferenceTensor>* outputs = nullptr;
  std::vector<double>* state = nullptr;  // Optimizer state; null for other ops.
  int64_t step = 0;                      // Optimizer step t; 0 for other ops.
};

using ReferenceKernel = std::function<Status(const ReferenceKernelCall& call)>;

// The table of reference kernels, keyed by op type. Built by MakeReferenceKernels(); a value
// type, not a global.
class ReferenceKernelTable {
 public:
  void Register(const std::string& op_type, ReferenceKernel kernel);
  bool Contains(const std::string& op_type) const;
  std::vector<std::string> OpTypes() const;
  // NotFound names the op type.
  Status Run(const ReferenceKernelCall& call) const;

 private:
  std::map<std::string, ReferenceKernel> kernels_;
};

ReferenceKernelTable MakeReferenceKernels();

}  // namespace reference
}  // namespace softwire

#endif  // SOFTWIRE_REFERENCE_KERNELS_REFERENCE_KERNELS_H_
