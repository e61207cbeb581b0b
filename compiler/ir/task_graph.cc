#include "compiler/ir/task_graph.h"

#include <utility>

namespace softwire {
namespace compiler {

TaskId TaskGraph::AddTask(TaskDef task) {
  task.id = static_cast<TaskId>(tasks_.size());
  tasks_.push_back(std::move(task));
  return tasks_.back().id;
}

RegisterId TaskGraph::AddRegister(TaskRegister register_def) {
  TaskDef& producer = mutable_task(register_def.producer);
  register_def.id = static_cast<RegisterId>(registers_.size());
  producer.outputs.push_back(register_def.id);
  registers_.push_back(std::move(register_def));
  return registers_.back().id;
}

void TaskGraph::AddReader(RegisterId register_id, TaskId task, int phase) {
  mutable_register(register_id).readers.push_back({task, phase});
  mutable_task(task).inputs.push_back(register_id);
}

const TaskDef& TaskGraph::task(TaskId id) const {
  CHECK(id >= 0 && id < static_cast<TaskId>(tasks_.size())) << "task id " << id;
  return tasks_[id];
}

TaskDef& TaskGraph::mutable_task(TaskId id) {
  CHECK(id >= 0 && id < static_cast<TaskId>(tasks_.size())) << "task id " << id;
  return tasks_[id];
}

const TaskRegister& TaskGraph::register_at(RegisterId id) const {
  CHECK(id >= 0 && id < static_cast<RegisterId>(registers_.size())) << "register id " << id;
  return registers_[id];
}

TaskRegister& TaskGraph::mutable_register(RegisterId id) {
  CHECK(id >= 0 && id < static_cast<RegisterId>(registers_.size())) << "register id " << id;
  return registers_[id];
}

std::vector<TensorType> TaskGraph::InputTypes(TaskId id) const {
  std::vector<TensorType> types;
  for (RegisterId input : task(id).inputs) types.push_back(register_at(input).type);
  return types;
}

std::vector<TensorType> TaskGraph::OutputTypes(TaskId id) const {
  std::vector<TensorType> types;
  for (RegisterId output : task(id).outputs) types.push_back(register_at(output).type);
  return types;
}

int TaskGraph::PhaseOf(RegisterId register_id, TaskId task) const {
  for (const RegisterReader& reader : register_at(register_id).readers) {
    if (reader.task == task) return reader.phase;
  }
  LOG(FATAL) << "task " << task << " does not read register " << register_id;
  return 0;
}

namespace {

Status Broken(const std::string& message) {
  return InternalError("task graph invariant broken: " + message);
}

int CountReads(const TaskDef& task, RegisterId register_id) {
  int count = 0;
  for (RegisterId input : task.inputs) count += input == register_id ? 1 : 0;
  return count;
}

}  // namespace

Status TaskGraph::Verify(int64_t total_pieces, bool slots_planned) const {
  const TaskId task_count = static_cast<TaskId>(tasks_.size());
  for (size_t i = 0; i < registers_.size(); ++i) {
    const TaskRegister& reg = registers_[i];
    const std::string where = "register '" + reg.name + "'";
    if (reg.id != static_cast<RegisterId>(i)) return Broken(where + ": id differs from index");
    if (reg.producer < 0 || reg.producer >= task_count) return Broken(where + ": no producer");
    int listed = 0;
    for (RegisterId output : tasks_[reg.producer].outputs) listed += output == reg.id ? 1 : 0;
    if (listed != 1) return Broken(where + ": not listed once by its producer");
    if (reg.period <= 0 || total_pieces % reg.period != 0) {
      return Broken(where + ": period " + std::to_string(reg.period) +
                    " does not divide total pieces " + std::to_string(total_pieces));
    }
    int phase_one_readers = 0;
    for (const RegisterReader& reader : reg.readers) {
      if (reader.task < 0 || reader.task >= task_count) return Broken(where + ": reader id");
      if (CountReads(tasks_[reader.task], reg.id) != 1) {
        return Broken(where + ": reader '" + tasks_[reader.task].name + "' does not read it once");
      }
      if (reader.phase != 0 && reader.phase != 1) return Broken(where + ": phase not 0 or 1");
      phase_one_readers += reader.phase;
    }
    if (phase_one_readers > 1) return Broken(where + ": more than one phase-1 reader");
    if (slots_planned) {
      if (reg.slots < 1) return Broken(where + ": fewer than one slot");
      if (phase_one_readers == 1 && reg.slots != 1) {
        return Broken(where + ": a phase-1 reader needs a register of exactly one slot");
      }
      if (reg.bytes_per_slot < reg.type.NumBytes()) {
        return Broken(where + ": bytes per slot below the tensor's bytes");
      }
    }
  }
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const TaskDef& task = tasks_[i];
    const std::string where = "task '" + task.name + "'";
    if (task.id != static_cast<TaskId>(i)) return Broken(where + ": id differs from index");
    if (task.period <= 0 || task.period * task.firings != total_pieces) {
      return Broken(where + ": period " + std::to_string(task.period) + " times firings " +
                    std::to_string(task.firings) + " is not total pieces " +
                    std::to_string(total_pieces));
    }
    for (RegisterId input : task.inputs) {
      const TaskRegister& reg = register_at(input);
      bool listed = false;
      for (const RegisterReader& reader : reg.readers) listed |= reader.task == task.id;
      if (!listed) return Broken(where + ": reads '" + reg.name + "' without being its reader");
      if (reg.period % task.period != 0) {
        return Broken(where + ": its period does not divide that of input '" + reg.name + "'");
      }
    }
    for (RegisterId output : task.outputs) {
      const TaskRegister& reg = register_at(output);
      if (reg.producer != task.id) return Broken(where + ": lists output '" + reg.name + "'");
      if (reg.period % task.period != 0) {
        return Broken(where + ": its period does not divide that of output '" + reg.name + "'");
      }
    }
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
