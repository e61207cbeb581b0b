#include "compiler/ir/graph_text.h"

#include <string>

#include "plan/labels.h"

namespace softwire {
namespace compiler {
namespace {

std::string TensorList(const LogicalGraph& graph, const std::vector<TensorId>& tensors) {
  std::string text;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (i > 0) text += ", ";
    const LogicalTensor& tensor = graph.tensor(tensors[i]);
    text += tensor.name + ": " + tensor.type.ToString();
  }
  return text;
}

std::string OpLine(const LogicalGraph& graph, const LogicalOp& op) {
  std::string line = "op " + std::to_string(op.id) + " '" + op.name + "' = " + op.type + "(" +
                     TensorList(graph, op.inputs) + ") -> (" + TensorList(graph, op.outputs) + ")";
  if (!op.attributes.empty()) line += " " + op.attributes.ToString();
  if (!op.gradient_of.empty()) line += " gradient_of '" + op.gradient_of + "'";
  if (op.stage.has_value()) line += " stage " + std::to_string(*op.stage);
  if (op.period > 0) line += " period " + std::to_string(op.period);
  if (op.placement.stage >= 0) line += " on stage " + std::to_string(op.placement.stage);
  if (op.placement.mesh >= 0) {
    line += " mesh " + std::to_string(op.placement.mesh);
    for (const placement::NdSbp& sbp : op.placement.inputs) {
      line += " " + placement::NdSbpToString(sbp);
    }
    line += " ->";
    for (const placement::NdSbp& sbp : op.placement.outputs) {
      line += " " + placement::NdSbpToString(sbp);
    }
  }
  return line + "\n";
}

std::string IdList(const std::vector<RegisterId>& ids) {
  std::string text = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(ids[i]);
  }
  return text + "]";
}

std::string TaskLine(const TaskDef& task) {
  std::string line = "task " + std::to_string(task.id) + " '" + task.name + "' " +
                     plan::ActorKindName(task.kind) + " " + task.op_type + " device " +
                     std::to_string(task.device) + " period " + std::to_string(task.period) +
                     " firings " + std::to_string(task.firings) + " in " + IdList(task.inputs) +
                     " out " + IdList(task.outputs);
  if (task.state_bytes > 0) {
    line +=
        " state " + std::to_string(task.state_bytes) + " B at " + std::to_string(task.state_offset);
  }
  return line + "\n";
}

std::string RegisterLine(const TaskRegister& reg) {
  std::string line = "register " + std::to_string(reg.id) + " '" + reg.name + "' " +
                     reg.type.ToString() + " producer " + std::to_string(reg.producer) +
                     " period " + std::to_string(reg.period) + " readers [";
  for (size_t i = 0; i < reg.readers.size(); ++i) {
    if (i > 0) line += ", ";
    line += std::to_string(reg.readers[i].task);
    if (reg.readers[i].phase != 0) line += " (phase " + std::to_string(reg.readers[i].phase) + ")";
  }
  line += "]";
  if (reg.slots > 0) {
    line +=
        " slots " + std::to_string(reg.slots) + " x " + std::to_string(reg.bytes_per_slot) + " B";
  }
  if (reg.offset >= 0) line += " at " + std::to_string(reg.offset);
  return line + "\n";
}

}  // namespace

std::string LogicalGraphToText(const LogicalGraph& graph) {
  std::string text;
  for (const LogicalOp& op : graph.ops()) text += OpLine(graph, op);
  return text;
}

std::string TaskGraphToText(const TaskGraph& tasks) {
  std::string text;
  for (const TaskDef& task : tasks.tasks()) text += TaskLine(task);
  for (const TaskRegister& reg : tasks.registers()) text += RegisterLine(reg);
  return text;
}

}  // namespace compiler
}  // namespace softwire
