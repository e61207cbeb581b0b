#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {

std::vector<Pass> StandardPasses() {
  return {
      {"resolve_schedule", ResolveSchedulePass},
      {"resolve_cluster", ResolveClusterPass},
      {"build_graph", BuildGraphPass},
      {"infer_shapes", InferShapesPass},
      {"add_sinks", AddSinksPass},
      {"autodiff", AutodiffPass},
      {"accumulate_gradients", AccumulateGradientsPass},
      {"optimizer", OptimizerPass},
      {"separate_repeated_inputs", SeparateRepeatedInputsPass},
      {"infer_periods", InferPeriodsPass},
      // Multi-device: placement, sbp and boxing passes take this one's place.
      {"place_on_one_device", PlaceOnOneDevicePass},
      {"expand_physical", ExpandPhysicalPass},
      {"plan_registers", PlanRegistersPass},
      {"plan_memory", PlanMemoryPass},
      {"estimate_costs", EstimateCostsPass},
      {"check_deadlock", CheckDeadlockPass},
      {"emit_plan", EmitPlanPass},
  };
}

}  // namespace compiler
}  // namespace softwire
