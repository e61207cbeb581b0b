// estimate_costs: seconds per firing of every task, from its op's cost (flops and bytes) and
// its device's figures: flops / device flops + bytes / device memory bandwidth. A roofline
// would take the larger of the two; the sum is deliberately pessimistic for small kernels,
// whose launch and cache effects the simple model does not see.
#include "compiler/ops/shape_helpers.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {

Status EstimateCostsPass(Compilation& compilation) {
  TaskGraph& tasks = compilation.tasks;
  for (TaskDef& task : tasks.mutable_tasks()) {
    const OpDefinition& definition = *compilation.registry().Find(task.op_type);
    std::vector<TensorType> inputs = tasks.InputTypes(task.id);
    std::vector<TensorType> outputs = tasks.OutputTypes(task.id);
    OpSignature signature{inputs, outputs, task.attributes};
    OpCost cost = definition.cost ? definition.cost(signature) : ElementwiseCost(signature, 1);
    const proto::DeviceSpec& device = compilation.devices.at(task.device).spec;
    task.estimated_seconds = cost.flops / device.flops() + cost.bytes / device.memory_bandwidth();
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
