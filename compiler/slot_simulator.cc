#include "compiler/slot_simulator.h"

#include "plan/fill_arithmetic.h"
#include "plan/labels.h"

namespace softwire {
namespace compiler {

SlotSimulator::SlotSimulator(const TaskGraph& tasks, int64_t total_pieces)
    : tasks_(tasks),
      total_pieces_(total_pieces),
      task_info_(tasks.tasks().size()),
      registers_(tasks.registers().size()),
      next_firing_(tasks.tasks().size(), 0),
      checked_inputs_(tasks.tasks().size(), 0),
      scheduled_(tasks.tasks().size(), 0) {
  for (const TaskRegister& reg : tasks.registers()) {
    CHECK_GE(reg.slots, 1) << plan::RegisterLabel(reg.name) << " has no slots planned";
    RegisterState& state = registers_[reg.id];
    state.period = reg.period;
    state.slots = reg.slots;
    state.producer = reg.producer;
    state.readers_begin = static_cast<int64_t>(readers_.size());
    for (const RegisterReader& reader : reg.readers) {
      if (reader.phase == 0) readers_.push_back(reader.task);
      if (reader.phase == 1) state.phase_one_reader = reader.task;
    }
    state.readers_end = static_cast<int64_t>(readers_.size());
    state.pending_begin = static_cast<int64_t>(pending_zero_.size());
    pending_zero_.resize(pending_zero_.size() + reg.slots, 0);
    pending_one_.resize(pending_one_.size() + reg.slots, 0);
  }
  for (const TaskDef& task : tasks.tasks()) {
    CHECK(total_pieces % task.period == 0) << "task '" << task.name << "' period";
    TaskInfo& info = task_info_[task.id];
    info.period = task.period;
    info.firings = total_pieces / task.period;
    info.inputs_begin = static_cast<int64_t>(inputs_.size());
    for (RegisterId input : task.inputs) {
      const RegisterState& reg = registers_[input];
      int phase = 0;
      if (reg.phase_one_reader == task.id) phase = 1;
      inputs_.push_back({input, phase});
    }
    info.inputs_end = static_cast<int64_t>(inputs_.size());
    info.outputs_begin = static_cast<int64_t>(outputs_.size());
    outputs_.insert(outputs_.end(), task.outputs.begin(), task.outputs.end());
    info.outputs_end = static_cast<int64_t>(outputs_.size());
  }
}

int SlotSimulator::PhaseOf(TaskId task, size_t input) const {
  return inputs_[task_info_[task].inputs_begin + static_cast<int64_t>(input)].phase;
}

bool SlotSimulator::InputAvailable(RegisterId input, int64_t fill, int phase) const {
  const RegisterState& state = registers_[input];
  if (fill >= state.completed) return false;
  if (phase == 0) return true;
  return fill >= state.freed &&
         pending_zero_[state.pending_begin + plan::SlotOf(fill, state.slots)] == 0;
}

bool SlotSimulator::CanFire(TaskId id) {
  const TaskInfo& task = task_info_[id];
  const int64_t firing = next_firing_[id];
  if (firing >= task.firings) return false;
  int64_t& checked = checked_inputs_[id];
  for (; task.inputs_begin + checked < task.inputs_end; ++checked) {
    const InputInfo& input = inputs_[task.inputs_begin + checked];
    const int64_t fill = plan::FillOf(firing, task.period, registers_[input.reg].period);
    if (!InputAvailable(input.reg, fill, input.phase)) return false;
  }
  for (int64_t k = task.outputs_begin; k < task.outputs_end; ++k) {
    const RegisterState& state = registers_[outputs_[k]];
    if (!plan::BeginsFill(firing, task.period, state.period)) continue;  // Continues its fill.
    if (!plan::SlotFreeFor(state.begun, state.freed, state.slots)) return false;
  }
  return true;
}

void SlotSimulator::FreeCompletedFills(RegisterId id) {
  RegisterState& state = registers_[id];
  bool freed_any = false;
  while (state.freed < state.completed) {
    const int64_t slot = state.pending_begin + plan::SlotOf(state.freed, state.slots);
    if (pending_zero_[slot] != 0 || pending_one_[slot]) break;
    ++state.freed;
    freed_any = true;
  }
  if (freed_any) Schedule(state.producer);
}

void SlotSimulator::Release(RegisterId id, int64_t fill, int phase) {
  RegisterState& state = registers_[id];
  const int64_t slot = state.pending_begin + plan::SlotOf(fill, state.slots);
  if (phase == 0) {
    if (--pending_zero_[slot] == 0 && state.phase_one_reader >= 0) {
      Schedule(state.phase_one_reader);
    }
  } else {
    pending_one_[slot] = 0;
  }
  FreeCompletedFills(id);
}

void SlotSimulator::Schedule(TaskId task) {
  if (scheduled_[task]) return;
  scheduled_[task] = 1;
  worklist_.push_back(task);
}

// Launch and completion at once: claim slots of fills that begin, then (as on completion)
// release inputs, then complete fills that end.
void SlotSimulator::Fire(TaskId id) {
  const TaskInfo& task = task_info_[id];
  const int64_t firing = next_firing_[id];
  for (int64_t k = task.outputs_begin; k < task.outputs_end; ++k) {
    RegisterState& state = registers_[outputs_[k]];
    if (!plan::BeginsFill(firing, task.period, state.period)) continue;
    const int64_t slot = state.pending_begin + plan::SlotOf(state.begun, state.slots);
    pending_zero_[slot] = static_cast<int>(state.readers_end - state.readers_begin);
    pending_one_[slot] = state.phase_one_reader >= 0 ? 1 : 0;
    ++state.begun;
  }
  for (int64_t k = task.inputs_begin; k < task.inputs_end; ++k) {
    const InputInfo& input = inputs_[k];
    const int64_t period = registers_[input.reg].period;
    if (plan::EndsFill(firing, task.period, period)) {
      Release(input.reg, plan::FillOf(firing, task.period, period), input.phase);
    }
  }
  for (int64_t k = task.outputs_begin; k < task.outputs_end; ++k) {
    const RegisterId output = outputs_[k];
    RegisterState& state = registers_[output];
    if (!plan::EndsFill(firing, task.period, state.period)) continue;
    state.completed = plan::FillOf(firing, task.period, state.period) + 1;
    for (int64_t r = state.readers_begin; r < state.readers_end; ++r) Schedule(readers_[r]);
    if (state.phase_one_reader >= 0 && state.readers_end == state.readers_begin) {
      Schedule(state.phase_one_reader);
    }
    FreeCompletedFills(output);
  }
  ++next_firing_[id];
  checked_inputs_[id] = 0;
}

SimulationResult SlotSimulator::Run() {
  SimulationResult result;
  for (const TaskInfo& task : task_info_) result.expected_firings += task.firings;
  for (TaskId id = static_cast<TaskId>(task_info_.size()) - 1; id >= 0; --id) Schedule(id);
  while (!worklist_.empty()) {
    const TaskId id = worklist_.back();
    worklist_.pop_back();
    scheduled_[id] = 0;
    while (CanFire(id)) {
      Fire(id);
      ++result.firings;
    }
  }
  result.finished = result.firings == result.expected_firings;
  for (TaskId id = 0; id < static_cast<TaskId>(next_firing_.size()); ++id) {
    if (next_firing_[id] < task_info_[id].firings) result.waits.push_back(DescribeWait(id));
  }
  if (!result.finished) result.cycle = DescribeCycle();
  return result;
}

TaskId SlotSimulator::WaitsFor(TaskId id, std::string* why) const {
  const TaskDef& task = tasks_.task(id);
  if (next_firing_[id] >= task_info_[id].firings) return -1;
  const int64_t firing = next_firing_[id];
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const TaskRegister& reg = tasks_.register_at(task.inputs[i]);
    const int phase = PhaseOf(id, i);
    const int64_t fill = plan::FillOf(firing, task.period, reg.period);
    if (InputAvailable(reg.id, fill, phase)) continue;
    if (phase == 1 && fill < registers_[reg.id].completed) {
      // The fill is there but a phase-0 reader still holds it.
      for (const RegisterReader& reader : reg.readers) {
        if (reader.phase != 0 || reader.task == id) continue;
        const TaskDef& other = tasks_.task(reader.task);
        if (plan::StillNeedsFill(next_firing_[reader.task], fill, other.period, reg.period)) {
          *why = "'" + task.name + "' waits for every reader of '" + reg.name + "', such as '" +
                 other.name + "'";
          return reader.task;
        }
      }
    }
    *why = "'" + task.name + "' waits for '" + reg.name + "' from '" +
           tasks_.task(reg.producer).name + "'";
    return reg.producer;
  }
  for (RegisterId output : task.outputs) {
    const TaskRegister& reg = tasks_.register_at(output);
    const RegisterState& state = registers_[output];
    if (!plan::BeginsFill(firing, task.period, reg.period) ||
        plan::SlotFreeFor(state.begun, state.freed, reg.slots)) {
      continue;
    }
    for (const RegisterReader& reader : reg.readers) {
      const TaskDef& other = tasks_.task(reader.task);
      if (plan::StillNeedsFill(next_firing_[reader.task], state.freed, other.period, reg.period)) {
        *why = "'" + task.name + "' waits for a slot of '" + reg.name + "' held by '" + other.name +
               "'";
        return reader.task;
      }
    }
  }
  return -1;
}

std::string SlotSimulator::DescribeCycle() const {
  TaskId start = -1;
  for (TaskId id = 0; id < static_cast<TaskId>(next_firing_.size()) && start < 0; ++id) {
    if (next_firing_[id] < task_info_[id].firings) start = id;
  }
  std::vector<TaskId> walk;
  std::vector<std::string> reasons;
  std::vector<int> seen(next_firing_.size(), -1);
  for (TaskId current = start; current >= 0;) {
    if (seen[current] >= 0) {
      std::string text;
      for (size_t i = seen[current]; i < walk.size(); ++i) {
        text += (text.empty() ? "" : "; ") + reasons[i];
      }
      return text;
    }
    seen[current] = static_cast<int>(walk.size());
    walk.push_back(current);
    std::string why;
    current = WaitsFor(current, &why);
    reasons.push_back(why);
  }
  return "";
}

std::string SlotSimulator::HoldersOf(RegisterId id, int64_t fill) const {
  const TaskRegister& reg = tasks_.register_at(id);
  if (fill >= registers_[id].completed) {
    return "is not complete yet";
  }
  std::string holders;
  for (const RegisterReader& reader : reg.readers) {
    const TaskDef& task = tasks_.task(reader.task);
    // A reader still holds the fill until it ran the firing that releases it.
    if (plan::StillNeedsFill(next_firing_[reader.task], fill, task.period, reg.period)) {
      holders += (holders.empty() ? "'" : ", '") + task.name + "'";
    }
  }
  return "is still held by " + holders;
}

std::string SlotSimulator::DescribeWait(TaskId id) const {
  const TaskDef& task = tasks_.task(id);
  const int64_t firing = next_firing_[id];
  std::string text = plan::ActorLabel(task.name) + " (firing " + std::to_string(firing) + " of " +
                     std::to_string(task_info_[id].firings) + ") waits for ";
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const TaskRegister& reg = tasks_.register_at(task.inputs[i]);
    const int64_t fill = plan::FillOf(firing, task.period, reg.period);
    if (InputAvailable(reg.id, fill, PhaseOf(id, i))) continue;
    return text + "fill " + std::to_string(fill) + " of " + plan::RegisterLabel(reg.name) +
           " from '" + tasks_.task(reg.producer).name + "'";
  }
  for (RegisterId output : task.outputs) {
    const TaskRegister& reg = tasks_.register_at(output);
    const RegisterState& state = registers_[output];
    if (!plan::BeginsFill(firing, task.period, reg.period) ||
        plan::SlotFreeFor(state.begun, state.freed, reg.slots)) {
      continue;
    }
    return text + "a free slot of " + plan::RegisterLabel(reg.name) + " (" +
           std::to_string(reg.slots) + (reg.slots == 1 ? " slot" : " slots") + "): fill " +
           std::to_string(state.freed) + " " + HoldersOf(output, state.freed);
  }
  return text + "nothing it lacks";
}

}  // namespace compiler
}  // namespace softwire
