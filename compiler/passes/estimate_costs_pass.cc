// estimate_costs: seconds per firing of every task by the cost model (placement/cost_model.h):
// a copy, and a send (insert_send_recv), takes its link's latency plus its bytes over the link's
// bandwidth (between nodes: the cluster's inter-node link); a recv copies within its device;
// every other task its
// op's flops and bytes on its device (flops / device flops + bytes / memory bandwidth). sim
// devices and the simulator take exactly these times.
#include "compiler/passes/passes.h"
#include "compiler/physical/op_cost.h"

namespace softwire {
namespace compiler {

Status EstimateCostsPass(Compilation& compilation) {
  TaskGraph& tasks = compilation.tasks;
  const placement::CostModel cost(*compilation.cluster);
  for (TaskDef& task : tasks.mutable_tasks()) {
    if (task.kind == proto::ACTOR_KIND_COPY || task.kind == proto::ACTOR_KIND_SEND) {
      const TaskRegister& input = tasks.register_at(task.inputs[0]);
      const TaskRegister& output = tasks.register_at(task.outputs[0]);
      task.estimated_seconds = cost.TransferSeconds(input.device, output.device,
                                                    static_cast<double>(output.type.NumBytes()));
      continue;
    }
    task.estimated_seconds =
        OpSeconds(*compilation.registry().Find(task.op_type), tasks.InputTypes(task.id),
                  tasks.OutputTypes(task.id), task.attributes, cost, task.device);
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
