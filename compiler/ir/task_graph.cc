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

namespace {

Status Broken(const std::string& message) {
  return InternalError("task graph invariant broken: " + message);
}

// Counting a value in a list: a scan of the list itself while it is short, as almost all are
// (a task reads a few registers, a register has a few readers); a binary search in a sorted
// copy when it is long (a pack or assemble task may read hundreds of registers, a register may
// have hundreds of readers). The copies lie back to back in one array, and only long lists get
// one: copying and sorting every list cost more than the scans it saved.
class ListCounter {
 public:
  static constexpr size_t kShort = 16;

  // Room for `lists` lists; a counter of none scans every list.
  explicit ListCounter(size_t lists) : begin_(lists, -1) {}

  // Keeps a sorted copy of list `list`, [first, last) mapped through `value_of`, when it is long.
  template <typename Iterator, typename ValueOf>
  void Add(size_t list, Iterator first, Iterator last, ValueOf value_of) {
    const size_t size = static_cast<size_t>(last - first);
    if (size <= kShort) return;
    begin_[list] = static_cast<int64_t>(values_.size());
    for (; first != last; ++first) values_.push_back(value_of(*first));
    std::sort(values_.end() - static_cast<int64_t>(size), values_.end());
  }

  // How often `value` occurs in list `list`, which is [first, last) mapped through `value_of`.
  template <typename Iterator, typename ValueOf>
  int64_t Count(size_t list, Iterator first, Iterator last, ValueOf value_of, int64_t value) const {
    const size_t size = static_cast<size_t>(last - first);
    if (size <= kShort || list >= begin_.size() || begin_[list] < 0) {
      int64_t count = 0;
      for (; first != last; ++first) count += value_of(*first) == value ? 1 : 0;
      return count;
    }
    auto sorted = values_.begin() + begin_[list];
    auto range = std::equal_range(sorted, sorted + static_cast<int64_t>(size), value);
    return range.second - range.first;
  }

 private:
  std::vector<int64_t> begin_;  // Per list: its copy's start in values_, or -1 when short.
  std::vector<int64_t> values_;
};

// Whether `values` holds a value twice: a scan of the earlier values for a short list (a task
// writes a few registers), a sorted copy in `scratch` for a long one.
bool HasRepeat(const std::vector<int64_t>& values, std::vector<int64_t>* scratch) {
  if (values.size() <= ListCounter::kShort) {
    for (size_t i = 1; i < values.size(); ++i) {
      if (std::find(values.begin(), values.begin() + static_cast<int64_t>(i), values[i]) !=
          values.begin() + static_cast<int64_t>(i)) {
        return true;
      }
    }
    return false;
  }
  *scratch = values;
  std::sort(scratch->begin(), scratch->end());
  return std::adjacent_find(scratch->begin(), scratch->end()) != scratch->end();
}

// Checks of one register and of one task, as Verify runs them on every one and VerifyChanged
// on the logged ones. ListCounter::Count scans lists it keeps no copy of (all of them for
// VerifyChanged, which builds none).
class GraphChecker {
 public:
  GraphChecker(const std::vector<TaskDef>& tasks, const std::vector<TaskRegister>& registers,
               int64_t total_pieces, bool slots_planned, const ListCounter& inputs_of,
               const ListCounter& readers_of)
      : tasks_(tasks),
        registers_(registers),
        total_pieces_(total_pieces),
        slots_planned_(slots_planned),
        inputs_of_(inputs_of),
        readers_of_(readers_of) {}

  Status CheckRegister(size_t i) const {
    const TaskId task_count = static_cast<TaskId>(tasks_.size());
    const TaskRegister& reg = registers_[i];
    auto fail = [&reg](const std::string& what) {
      return Broken(plan::RegisterLabel(reg.name) + ": " + what);
    };
    if (reg.id != static_cast<RegisterId>(i)) return fail("id differs from index");
    if (reg.producer < 0 || reg.producer >= task_count) return fail("no producer");
    if (reg.period <= 0 || total_pieces_ % reg.period != 0) {
      return fail("period " + std::to_string(reg.period) + " does not divide total pieces " +
                  std::to_string(total_pieces_));
    }
    int phase_one_readers = 0;
    for (const RegisterReader& reader : reg.readers) {
      if (reader.task < 0 || reader.task >= task_count) return fail("reader id");
      const std::vector<RegisterId>& inputs = tasks_[reader.task].inputs;
      if (inputs_of_.Count(static_cast<size_t>(reader.task), inputs.begin(), inputs.end(),
                           RegisterOf, reg.id) != 1) {
        return fail("reader '" + tasks_[reader.task].name + "' does not read it once");
      }
      if (reader.phase != 0 && reader.phase != 1) return fail("phase not 0 or 1");
      phase_one_readers += reader.phase;
    }
    if (phase_one_readers > 1) return fail("more than one phase-1 reader");
    if (slots_planned_) {
      if (reg.slots < 1) return fail("fewer than one slot");
      if (phase_one_readers == 1 && reg.slots != 1) {
        return fail("a phase-1 reader needs a register of exactly one slot");
      }
      if (reg.bytes_per_slot < reg.type.NumBytes()) {
        return fail("bytes per slot below the tensor's bytes");
      }
    }
    return Status::Ok();
  }

  // Every task lists only registers it produces, each once (with as many listings as registers,
  // every register is then listed once by its producer: Verify counts them).
  Status CheckTask(size_t i, std::vector<int64_t>* scratch) const {
    const TaskDef& task = tasks_[i];
    auto fail = [&task](const std::string& what) {
      return Broken("task '" + task.name + "': " + what);
    };
    if (HasRepeat(task.outputs, scratch)) return fail("lists an output twice");
    if (task.id != static_cast<TaskId>(i)) return fail("id differs from index");
    if (task.period <= 0 || task.period * task.firings != total_pieces_) {
      return fail("period " + std::to_string(task.period) + " times firings " +
                  std::to_string(task.firings) + " is not total pieces " +
                  std::to_string(total_pieces_));
    }
    if (task.ordering_inputs < 0 ||
        static_cast<size_t>(task.ordering_inputs) > task.inputs.size()) {
      return fail("has " + std::to_string(task.ordering_inputs) + " ordering inputs of " +
                  std::to_string(task.inputs.size()) + " inputs");
    }
    if (!task.input_types.empty() && task.input_types.size() != task.inputs.size()) {
      return fail("has " + std::to_string(task.input_types.size()) + " input types for " +
                  std::to_string(task.inputs.size()) + " inputs");
    }
    const RegisterId register_count = static_cast<RegisterId>(registers_.size());
    for (RegisterId id : task.inputs) {
      if (id < 0 || id >= register_count) return fail("reads register id " + std::to_string(id));
    }
    for (RegisterId id : task.outputs) {
      if (id < 0 || id >= register_count) return fail("lists register id " + std::to_string(id));
    }
    if (!task.input_offsets.empty() && (task.input_offsets.size() != task.inputs.size() ||
                                        task.input_types.size() != task.inputs.size())) {
      return fail("has " + std::to_string(task.input_offsets.size()) + " input offsets and " +
                  std::to_string(task.input_types.size()) + " input types for " +
                  std::to_string(task.inputs.size()) + " inputs");
    }
    for (size_t k = 0; k < task.input_types.size(); ++k) {
      const int64_t held = registers_[task.inputs[k]].type.NumBytes();
      const int64_t read = task.input_types[k].NumBytes();
      if (task.input_offsets.empty()
              ? read != held
              : task.input_offsets[k] < 0 || task.input_offsets[k] + read > held) {
        return fail("views input '" + registers_[task.inputs[k]].name + "' at another size");
      }
    }
    for (RegisterId input : task.inputs) {
      const TaskRegister& reg = registers_[input];
      if (readers_of_.Count(static_cast<size_t>(input), reg.readers.begin(), reg.readers.end(),
                            TaskOf, task.id) == 0) {
        return fail("reads '" + reg.name + "' without being its reader");
      }
      if (reg.period % task.period != 0) {
        return fail("its period does not divide that of input '" + reg.name + "'");
      }
    }
    for (RegisterId output : task.outputs) {
      const TaskRegister& reg = registers_[output];
      if (reg.producer != task.id) return fail("lists output '" + reg.name + "'");
      if (reg.period % task.period != 0) {
        return fail("its period does not divide that of output '" + reg.name + "'");
      }
    }
    return Status::Ok();
  }

  // Register `i` (whose producer CheckRegister found in range) is listed once by its producer.
  Status CheckListedOnce(size_t i) const {
    const TaskRegister& reg = registers_[i];
    const std::vector<RegisterId>& outputs = tasks_[reg.producer].outputs;
    if (std::count(outputs.begin(), outputs.end(), reg.id) != 1) {
      return Broken(plan::RegisterLabel(reg.name) + ": not listed once by its producer");
    }
    return Status::Ok();
  }

  static RegisterId RegisterOf(RegisterId id) { return id; }
  static TaskId TaskOf(const RegisterReader& reader) { return reader.task; }

 private:
  const std::vector<TaskDef>& tasks_;
  const std::vector<TaskRegister>& registers_;
  const int64_t total_pieces_;
  const bool slots_planned_;
  const ListCounter& inputs_of_;
  const ListCounter& readers_of_;
};

}  // namespace

// Names are built only for the message of a broken invariant: Verify runs after every pass on
// graphs of millions of tasks.
Status TaskGraph::Verify(int64_t total_pieces, bool slots_planned) const {
  // Every long list of inputs and of readers, sorted, in two flat arrays (a few large
  // allocations rather than millions of small ones); short ones are scanned in place.
  ListCounter inputs_of(tasks_.size());
  for (size_t i = 0; i < tasks_.size(); ++i) {
    inputs_of.Add(i, tasks_[i].inputs.begin(), tasks_[i].inputs.end(), GraphChecker::RegisterOf);
  }
  ListCounter readers_of(registers_.size());
  for (size_t i = 0; i < registers_.size(); ++i) {
    readers_of.Add(i, registers_[i].readers.begin(), registers_[i].readers.end(),
                   GraphChecker::TaskOf);
  }
  const GraphChecker checker(tasks_, registers_, total_pieces, slots_planned, inputs_of,
                             readers_of);
  for (size_t i = 0; i < registers_.size(); ++i) {
    SOFTWIRE_RETURN_IF_ERROR(checker.CheckRegister(i));
  }
  size_t listings = 0;
  std::vector<int64_t> scratch;
  for (size_t i = 0; i < tasks_.size(); ++i) {
    SOFTWIRE_RETURN_IF_ERROR(checker.CheckTask(i, &scratch));
    listings += tasks_[i].outputs.size();
  }
  if (listings != registers_.size()) {
    for (size_t i = 0; i < registers_.size(); ++i) {
      SOFTWIRE_RETURN_IF_ERROR(checker.CheckListedOnce(i));
    }
  }
  return Status::Ok();
}

Status TaskGraph::VerifyChanged(int64_t total_pieces, bool slots_planned) const {
  CHECK(logging_) << "VerifyChanged needs a complete change log (ChangeLogComplete)";
  // Each logged id once; ids out of range are left to the checks of what refers to them.
  auto distinct = [](std::vector<int64_t> ids, size_t size) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    ids.erase(
        std::remove_if(ids.begin(), ids.end(),
                       [size](int64_t id) { return id < 0 || static_cast<size_t>(id) >= size; }),
        ids.end());
    return ids;
  };
  const std::vector<RegisterId> registers = distinct(changed_registers_, registers_.size());
  const std::vector<TaskId> tasks = distinct(changed_tasks_, tasks_.size());
  const ListCounter no_copies(0);
  const GraphChecker checker(tasks_, registers_, total_pieces, slots_planned, no_copies, no_copies);
  for (RegisterId id : registers) {
    SOFTWIRE_RETURN_IF_ERROR(checker.CheckRegister(static_cast<size_t>(id)));
    SOFTWIRE_RETURN_IF_ERROR(checker.CheckListedOnce(static_cast<size_t>(id)));
  }
  std::vector<int64_t> scratch;
  for (TaskId id : tasks)
    SOFTWIRE_RETURN_IF_ERROR(checker.CheckTask(static_cast<size_t>(id), &scratch));
  return Status::Ok();
}

Status TaskGraph::VerifyAnnotations() const {
  for (const TaskRegister& reg : registers_) {
    auto fail = [&reg](const std::string& what) {
      return Broken(plan::RegisterLabel(reg.name) + ": " + what);
    };
    int phase_one_readers = 0;
    for (const RegisterReader& reader : reg.readers) phase_one_readers += reader.phase == 1;
    if (reg.slots < 1) return fail("fewer than one slot");
    if (phase_one_readers == 1 && reg.slots != 1) {
      return fail("a phase-1 reader needs a register of exactly one slot");
    }
    if (reg.bytes_per_slot < reg.type.NumBytes()) {
      return fail("bytes per slot below the tensor's bytes");
    }
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
