// PlanRun: one sequential double-precision execution of a plan (see RunReferencePlan).
//
// Owns what the run changes: each actor's next firing, its dataset (source), current value
// (variable) and optimizer state (update), the register fills (RegisterValues) and the values
// sinks reported. Internal to reference/interpreter/. Not thread-safe.
#ifndef SOFTWIRE_REFERENCE_INTERPRETER_PLAN_RUN_H_
#define SOFTWIRE_REFERENCE_INTERPRETER_PLAN_RUN_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "data/dataset.h"
#include "proto/plan.pb.h"
#include "reference/interpreter/reference_interpreter.h"
#include "reference/interpreter/register_values.h"
#include "reference/kernels/reference_kernels.h"

namespace softwire {
namespace reference {

class PlanRun {
 public:
  // `plan` is borrowed; runs its first `steps` steps, its data paths resolved under
  // `data_root`.
  PlanRun(const proto::Plan& plan, int64_t steps, data::DataRoot data_root);

  // Checks what the interpreter relies on, opens datasets, initialises variables.
  Status Prepare();
  // Fires every actor `firings` times. Errors name the actor.
  Status Run();
  // Per-step outputs and final variables. Call after Run.
  ReferenceResult Result() const;

 private:
  struct ActorRun {
    const proto::ActorDef* def = nullptr;
    int64_t firings = 0;
    int64_t next = 0;
    std::vector<int> input_phases;           // Per kernel input: the actor's phase on it.
    std::unique_ptr<data::Dataset> dataset;  // Source.
    ReferenceTensor value;                   // Variable (first_firing_only cast): its value.
    std::vector<double> optimizer_state;     // Update.
    std::vector<double> reported;            // Sink: one value per piece.
  };

  Status CheckActor(int index) const;
  Status PrepareActor(ActorRun* run);
  bool CanFire(const ActorRun& run) const;
  Status Fire(ActorRun* run);
  // The kind-specific work of firing `index`: writes the output fills.
  Status Work(ActorRun* run, int64_t index, const std::vector<const ReferenceTensor*>& inputs);
  Status RunSource(ActorRun* run, int64_t index);
  Status RunKernel(ActorRun* run, int64_t index, const std::vector<const ReferenceTensor*>& inputs);
  Status RunAccumulate(ActorRun* run, int64_t index, const ReferenceTensor& input);
  Status RunUpdate(ActorRun* run, int64_t index, const std::vector<const ReferenceTensor*>& inputs);
  // A cast with `first_firing_only` (fold_weight_casts): its update writes its value.
  static bool FirstFiringOnly(const proto::ActorDef& actor);
  // The fill firing `index` of `actor` reads or writes in register `r`.
  int64_t FillOf(const ActorRun& run, int64_t r, int64_t index) const;
  ReferenceTensor StitchVariable(const proto::PlanVariable& variable) const;

  const proto::Plan& plan_;
  const int64_t steps_;
  const data::DataRoot data_root_;
  const int64_t total_pieces_;
  ReferenceKernelTable kernels_;
  std::vector<int64_t> order_;
  std::vector<ActorRun> actors_;
  RegisterValues registers_;
};

}  // namespace reference
}  // namespace softwire

#endif  // SOFTWIRE_REFERENCE_INTERPRETER_PLAN_RUN_H_
