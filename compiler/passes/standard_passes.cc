#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {

std::vector<Pass> StandardPasses() {
  return {
      {"resolve_schedule", ResolveSchedulePass},
      {"resolve_cluster", ResolveClusterPass},
      {"resolve_parallelism", ResolveParallelismPass},
      {"build_graph", BuildGraphPass},
      {"infer_shapes", InferShapesPass},
      {"add_sinks", AddSinksPass},
      {"autodiff", AutodiffPass},
      {"accumulate_gradients", AccumulateGradientsPass},
      {"optimizer", OptimizerPass},
      {"batch_norm_statistics", BatchNormStatisticsPass},
      {"apply_precision", ApplyPrecisionPass},
      {"separate_repeated_inputs", SeparateRepeatedInputsPass},
      {"infer_periods", InferPeriodsPass},
      {"partition_stages", PartitionStagesPass},
      {"choose_sbp", ChooseSbpPass},
      {"shard_updates", ShardUpdatesPass},
      {"choose_layouts", ChooseLayoutsPass},
      {"insert_boxing", InsertBoxingPass},
      {"expand_physical", ExpandPhysicalPass},
      {"fold_views", FoldViewsPass},
      {"recompute_activations", RecomputeActivationsPass},
      {"fuse_elementwise", FuseElementwisePass},
      {"fold_weight_casts", FoldWeightCastsPass},
      {"order_weight_gradients", OrderWeightGradientsPass},
      {"insert_send_recv", InsertSendRecvPass},
      {"plan_registers", PlanRegistersPass},
      {"fit_memory", FitMemoryPass},
      {"plan_memory", PlanMemoryPass},
      {"estimate_costs", EstimateCostsPass},
      {"check_deadlock", CheckDeadlockPass},
      {"emit_plan", EmitPlanPass},
      {"share_memory", ShareMemoryPass},
      {"meet_budget", MeetBudgetPass},
  };
}

}  // namespace compiler
}  // namespace softwire
