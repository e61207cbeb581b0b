// expand_physical: one task per placed op (in topological order, so producers come first and
// plans read top to bottom), one register per tensor on its producer's device, and one reader
// per op input, in phase 1 for the input an update op writes in place.
//
// With several devices this is where an op placed on N devices becomes N tasks and a boxing
// step becomes its transfer tasks; for one device the mapping is one to one.
#include <map>

#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

TaskDef TaskFor(const Compilation& compilation, const LogicalOp& op,
                const OpDefinition& definition) {
  TaskDef task;
  task.name = op.name;
  task.kind = definition.actor_kind;
  task.device = op.device;
  task.queue = 0;
  task.period = op.period;
  task.firings = compilation.schedule.total_pieces() / op.period;
  task.op_type = op.type;
  task.attributes = op.attributes;
  task.logical_op = op.id;
  task.stage = op.stage.value_or(0);
  return task;
}

}  // namespace

Status ExpandPhysicalPass(Compilation& compilation) {
  const LogicalGraph& graph = compilation.graph;
  TaskGraph& tasks = compilation.tasks;
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<OpId> order, graph.TopologicalOrder());
  std::map<TensorId, RegisterId> register_of;
  for (OpId id : order) {
    const LogicalOp& op = graph.op(id);
    const OpDefinition& definition = *compilation.registry().Find(op.type);
    TaskId task = tasks.AddTask(TaskFor(compilation, op, definition));
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      int phase = static_cast<int>(i) == definition.in_place_input ? 1 : 0;
      tasks.AddReader(register_of.at(op.inputs[i]), task, phase);
    }
    for (TensorId output : op.outputs) {
      const LogicalTensor& tensor = graph.tensor(output);
      TaskRegister reg;
      reg.name = tensor.name;
      reg.producer = task;
      reg.device = op.device;
      reg.type = tensor.type;
      reg.period = tensor.period;
      reg.logical_tensor = tensor.id;
      register_of[output] = tasks.AddRegister(std::move(reg));
    }
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
