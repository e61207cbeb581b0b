// TaskGraph's verification (task_graph.h: Verify, VerifyChanged, VerifyAnnotations): the
// structure's invariants, checked whole or where the change log says a pass may have touched it
// (docs/DECISIONS.md 36).
#include <algorithm>
#include <string>
#include <vector>

#include "compiler/ir/task_graph.h"
#include "plan/labels.h"

namespace softwire {
namespace compiler {

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
