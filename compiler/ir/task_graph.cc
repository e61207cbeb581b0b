#include "compiler/ir/task_graph.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "plan/labels.h"

namespace softwire {
namespace compiler {

TaskId TaskGraph::AddTask(TaskDef task) {
  ++structure_version_;
  task.id = static_cast<TaskId>(tasks_.size());
  tasks_.push_back(std::move(task));
  LogTask(tasks_.back().id, /*with_relations=*/false);  // New: no relation held before.
  return tasks_.back().id;
}

RegisterId TaskGraph::AddRegister(TaskRegister register_def) {
  ++structure_version_;
  TaskDef& producer = mutable_task(register_def.producer);
  register_def.id = static_cast<RegisterId>(registers_.size());
  producer.outputs.push_back(register_def.id);
  registers_.push_back(std::move(register_def));
  LogRegister(registers_.back().id, /*with_relations=*/true);  // And its producer.
  return registers_.back().id;
}

void TaskGraph::StartChangeLog() const {
  changed_tasks_.clear();
  changed_registers_.clear();
  logging_ = true;
}

void TaskGraph::EndChangeLog() const {
  logging_ = false;
  changed_tasks_ = {};
  changed_registers_ = {};
}

// Past the graph's size (and a floor for small graphs) a check of the log costs more than one
// of everything.
bool TaskGraph::ChangeLogFull() const {
  constexpr size_t kFloor = 4096;
  return changed_tasks_.size() + changed_registers_.size() >
         tasks_.size() + registers_.size() + kFloor;
}

void TaskGraph::LogTask(TaskId id, bool with_relations) const {
  if (!logging_) return;
  if (id < 0 || id >= static_cast<TaskId>(tasks_.size())) return EndChangeLog();
  changed_tasks_.push_back(id);
  if (with_relations) {
    const TaskDef& task = tasks_[id];
    changed_registers_.insert(changed_registers_.end(), task.inputs.begin(), task.inputs.end());
    changed_registers_.insert(changed_registers_.end(), task.outputs.begin(), task.outputs.end());
  }
  if (ChangeLogFull()) EndChangeLog();
}

void TaskGraph::LogRegister(RegisterId id, bool with_relations) const {
  if (!logging_) return;
  if (id < 0 || id >= static_cast<RegisterId>(registers_.size())) return EndChangeLog();
  changed_registers_.push_back(id);
  if (with_relations) {
    const TaskRegister& reg = registers_[id];
    changed_tasks_.push_back(reg.producer);
    for (const RegisterReader& reader : reg.readers) changed_tasks_.push_back(reader.task);
  }
  if (ChangeLogFull()) EndChangeLog();
}

void TaskGraph::Reserve(size_t tasks, size_t registers) {
  tasks_.reserve(tasks);
  registers_.reserve(registers);
}

void TaskGraph::AddReader(RegisterId register_id, TaskId task, int phase) {
  ++structure_version_;
  CHECK(register_id >= 0 && register_id < static_cast<RegisterId>(registers_.size()))
      << "register id " << register_id;
  CHECK(task >= 0 && task < static_cast<TaskId>(tasks_.size())) << "task id " << task;
  // Both only gain an entry, so what they were related to still holds: the two are logged
  // alone.
  LogRegister(register_id, /*with_relations=*/false);
  LogTask(task, /*with_relations=*/false);
  ++annotation_version_;
  registers_[register_id].readers.push_back({task, phase});
  tasks_[task].inputs.push_back(register_id);
  if (!tasks_[task].input_offsets.empty()) tasks_[task].input_offsets.push_back(0);
}

void TaskGraph::MoveReaders(RegisterId from, RegisterId to) {
  CHECK_EQ(register_at(from).type.NumBytes(), register_at(to).type.NumBytes())
      << "a view of " << registers_[to].name << " as " << registers_[from].name
      << " changes its size";
  TransferReaders(from, to, [to](TaskDef& task, size_t k) { task.inputs[k] = to; });
}

void TaskGraph::MoveReadersToRange(RegisterId from, RegisterId to, int64_t offset) {
  CHECK(offset >= 0 &&
        offset + register_at(from).type.NumBytes() <= register_at(to).type.NumBytes())
      << "a range of " << registers_[to].name << " as " << registers_[from].name
      << " leaves its bytes";
  TransferReaders(from, to, [to, offset](TaskDef& task, size_t k) {
    if (task.input_offsets.empty()) task.input_offsets.assign(task.inputs.size(), 0);
    CHECK_EQ(task.input_offsets[k], 0) << "task '" << task.name << "' reads a range of a range";
    task.inputs[k] = to;
    task.input_offsets[k] = offset;
  });
}

void TaskGraph::TransferReaders(RegisterId from, RegisterId to,
                                const std::function<void(TaskDef&, size_t)>& rebind) {
  ++structure_version_;
  TaskRegister& source = mutable_register(from);
  LogRegister(to, /*with_relations=*/false);
  std::vector<RegisterReader> readers = std::move(source.readers);
  source.readers.clear();
  for (const RegisterReader& reader : readers) {
    TaskDef& task = mutable_task(reader.task);
    CHECK(std::find(task.inputs.begin(), task.inputs.end(), to) == task.inputs.end())
        << "task '" << task.name << "' would read register '" << registers_[to].name << "' twice";
    // The types the kernel reads stay what they were (a view of a view keeps its own).
    if (task.input_types.empty()) {
      for (RegisterId input : task.inputs) task.input_types.push_back(register_at(input).type);
    }
    for (size_t k = 0; k < task.inputs.size(); ++k) {
      if (task.inputs[k] == from) rebind(task, k);
    }
    // Before an in-place (phase-1) reader, which the dump then still lists last.
    std::vector<RegisterReader>& target = registers_[to].readers;
    auto writer = std::find_if(target.begin(), target.end(),
                               [](const RegisterReader& r) { return r.phase == 1; });
    target.insert(writer, reader);
  }
}

int64_t TaskGraph::InputOffset(TaskId id, size_t k) const {
  const TaskDef& reader = task(id);
  return k < reader.input_offsets.size() ? reader.input_offsets[k] : 0;
}

void TaskGraph::MoveReader(RegisterId from, RegisterId to, TaskId reader) {
  ++structure_version_;
  LogRegister(from, /*with_relations=*/true);
  LogRegister(to, /*with_relations=*/false);
  CHECK(registers_[from].type == registers_[to].type)
      << registers_[from].name << " and " << registers_[to].name << " differ in type";
  std::vector<RegisterReader>& readers = registers_[from].readers;
  auto found = std::find_if(readers.begin(), readers.end(),
                            [&](const RegisterReader& r) { return r.task == reader; });
  CHECK(found != readers.end()) << "task " << reader << " does not read " << registers_[from].name;
  const RegisterReader moved = *found;
  readers.erase(found);
  TaskDef& task = mutable_task(reader);
  CHECK(std::find(task.inputs.begin(), task.inputs.end(), to) == task.inputs.end())
      << "task '" << task.name << "' would read register '" << registers_[to].name << "' twice";
  std::replace(task.inputs.begin(), task.inputs.end(), from, to);
  std::vector<RegisterReader>& target = registers_[to].readers;
  auto writer = std::find_if(target.begin(), target.end(),
                             [](const RegisterReader& r) { return r.phase == 1; });
  target.insert(writer, moved);
}

void TaskGraph::MergeTasks(TaskId into, const std::vector<TaskId>& absorbed,
                           const std::vector<RegisterId>& inputs,
                           std::vector<TensorType> input_types,
                           const std::vector<RegisterId>& outputs,
                           std::vector<bool>* removed_registers) {
  ++structure_version_;
  EndChangeLog();
  // A chain has a handful of members, inputs and outputs: searched in place rather than marked
  // in tables the size of the graph, which made fusing every chain of a large plan quadratic.
  std::vector<TaskId> members = absorbed;
  members.push_back(into);
  auto contains = [](const auto& values, auto value) {
    return std::find(values.begin(), values.end(), value) != values.end();
  };
  std::vector<RegisterId> seen;
  for (TaskId task : members) {
    for (RegisterId read : tasks_[task].inputs) {
      if (contains(seen, read)) continue;
      seen.push_back(read);
      const bool is_input = contains(inputs, read);
      std::vector<RegisterReader> readers;
      bool member_reads = false;
      for (const RegisterReader& reader : registers_[read].readers) {
        if (!contains(members, reader.task)) {
          readers.push_back(reader);
        } else {
          member_reads = true;
        }
      }
      CHECK(member_reads || !is_input)
          << "register '" << registers_[read].name << "' is no input of the tasks merged into '"
          << tasks_[into].name << "'";
      if (is_input) {
        // After the other phase-0 readers (see the header): the merged task is readied last.
        auto phase_one =
            std::find_if(readers.begin(), readers.end(),
                         [](const RegisterReader& reader) { return reader.phase != 0; });
        readers.insert(phase_one, RegisterReader{into, 0});
      }
      registers_[read].readers = std::move(readers);
    }
  }
  for (TaskId task : members) {
    for (RegisterId written : tasks_[task].outputs) {
      TaskRegister& reg = registers_[written];
      if (contains(outputs, written)) {
        reg.producer = into;
        continue;
      }
      CHECK(reg.readers.empty()) << "register '" << reg.name
                                 << "' is read outside the tasks merged into '" << tasks_[into].name
                                 << "'";
      (*removed_registers)[written] = true;
    }
  }
  for (TaskId task : members) {
    CHECK(tasks_[task].input_offsets.empty())
        << "task '" << tasks_[task].name << "' reads a range view and cannot be merged";
  }
  for (TaskId task : absorbed) {
    tasks_[task].inputs.clear();
    tasks_[task].input_types.clear();
    tasks_[task].outputs.clear();
  }
  TaskDef& merged = tasks_[into];
  merged.inputs = inputs;
  merged.input_types = std::move(input_types);
  merged.outputs = outputs;
}

void TaskGraph::RemoveTasks(const std::vector<bool>& removed) {
  RemoveTasks(removed, std::vector<bool>(registers_.size(), false));
}

void TaskGraph::RemoveTasks(const std::vector<bool>& removed,
                            const std::vector<bool>& removed_registers) {
  ++structure_version_;
  EndChangeLog();
  std::vector<TaskId> task_id(tasks_.size(), -1);
  TaskId next_task = 0;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    if (!removed[i]) task_id[i] = next_task++;
  }
  std::vector<RegisterId> register_id(registers_.size(), -1);
  RegisterId next_register = 0;
  for (size_t i = 0; i < registers_.size(); ++i) {
    if (removed[registers_[i].producer] || removed_registers[i]) continue;
    register_id[i] = next_register++;
  }
  std::vector<TaskDef> tasks;
  tasks.reserve(static_cast<size_t>(next_task));
  for (TaskDef& task : tasks_) {
    if (removed[task.id]) continue;
    task.id = task_id[task.id];
    for (RegisterId& input : task.inputs) {
      CHECK_GE(register_id[input], 0) << "task '" << task.name << "' reads a removed register";
      input = register_id[input];
    }
    for (RegisterId& output : task.outputs) output = register_id[output];
    tasks.push_back(std::move(task));
  }
  std::vector<TaskRegister> registers;
  registers.reserve(static_cast<size_t>(next_register));
  for (TaskRegister& reg : registers_) {
    if (register_id[reg.id] < 0) continue;
    reg.id = register_id[reg.id];
    reg.producer = task_id[reg.producer];
    std::vector<RegisterReader> readers;
    for (const RegisterReader& reader : reg.readers) {
      if (!removed[reader.task]) readers.push_back({task_id[reader.task], reader.phase});
    }
    reg.readers = std::move(readers);
    registers.push_back(std::move(reg));
  }
  tasks_ = std::move(tasks);
  registers_ = std::move(registers);
}

const TaskDef& TaskGraph::task(TaskId id) const {
  CHECK(id >= 0 && id < static_cast<TaskId>(tasks_.size())) << "task id " << id;
  return tasks_[id];
}

TaskDef& TaskGraph::mutable_task(TaskId id) {
  CHECK(id >= 0 && id < static_cast<TaskId>(tasks_.size())) << "task id " << id;
  LogTask(id, /*with_relations=*/true);
  return tasks_[id];
}

const TaskRegister& TaskGraph::register_at(RegisterId id) const {
  CHECK(id >= 0 && id < static_cast<RegisterId>(registers_.size())) << "register id " << id;
  return registers_[id];
}

TaskRegister& TaskGraph::mutable_register(RegisterId id) {
  CHECK(id >= 0 && id < static_cast<RegisterId>(registers_.size())) << "register id " << id;
  ++annotation_version_;
  LogRegister(id, /*with_relations=*/true);
  return registers_[id];
}

size_t TaskGraph::KernelInputCount(TaskId id) const {
  const TaskDef& reader = task(id);
  return reader.inputs.size() - static_cast<size_t>(reader.ordering_inputs);
}

const TensorType& TaskGraph::InputType(TaskId id, size_t k) const {
  const TaskDef& reader = task(id);
  CHECK_LT(k, KernelInputCount(id)) << "task '" << reader.name << "' kernel input";
  return reader.input_types.empty() ? register_at(reader.inputs[k]).type : reader.input_types[k];
}

std::vector<TensorType> TaskGraph::InputTypes(TaskId id) const {
  const TaskDef& reader = task(id);
  const size_t kernel_inputs = reader.inputs.size() - static_cast<size_t>(reader.ordering_inputs);
  if (!reader.input_types.empty()) {
    return std::vector<TensorType>(
        reader.input_types.begin(),
        reader.input_types.begin() + static_cast<int64_t>(kernel_inputs));
  }
  std::vector<TensorType> types;
  for (size_t k = 0; k < kernel_inputs; ++k) types.push_back(register_at(reader.inputs[k]).type);
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

}  // namespace compiler
}  // namespace softwire
