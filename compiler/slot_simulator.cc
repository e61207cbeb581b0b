#include "compiler/slot_simulator.h"

namespace softwire {
namespace compiler {

SlotSimulator::SlotSimulator(const TaskGraph& tasks, int64_t total_pieces)
    : tasks_(tasks),
      total_pieces_(total_pieces),
      next_firing_(tasks.tasks().size(), 0),
      registers_(tasks.registers().size()) {
  for (const TaskDef& task : tasks.tasks()) {
    CHECK(total_pieces % task.period == 0) << "task '" << task.name << "' period";
  }
  for (const TaskRegister& reg : tasks.registers()) {
    CHECK_GE(reg.slots, 1) << "register '" << reg.name << "' has no slots planned";
  }
}

bool SlotSimulator::InputAvailable(RegisterId input, int64_t fill, int phase) const {
  const RegisterState& state = registers_[input];
  if (fill >= state.completed) return false;
  if (phase == 0) return true;
  auto live = state.live.find(fill);
  return live != state.live.end() && live->second.phase_zero_pending == 0;
}

bool SlotSimulator::CanFire(TaskId id) const {
  const TaskDef& task = tasks_.task(id);
  const int64_t firing = next_firing_[id];
  if (firing >= total_pieces_ / task.period) return false;
  const int64_t first_piece = firing * task.period;
  for (RegisterId input : task.inputs) {
    const int64_t fill = first_piece / tasks_.register_at(input).period;
    if (!InputAvailable(input, fill, tasks_.PhaseOf(input, id))) return false;
  }
  for (RegisterId output : task.outputs) {
    const TaskRegister& reg = tasks_.register_at(output);
    if (first_piece % reg.period != 0) continue;  // Continues a fill it holds.
    const RegisterState& state = registers_[output];
    if (state.begun - state.freed >= reg.slots) return false;
  }
  return true;
}

void SlotSimulator::FreeCompletedFills(RegisterId id) {
  RegisterState& state = registers_[id];
  while (!state.live.empty()) {
    auto oldest = state.live.begin();
    bool released = oldest->second.phase_zero_pending == 0 && !oldest->second.phase_one_pending;
    if (oldest->first >= state.completed || !released) return;
    state.live.erase(oldest);
    ++state.freed;
  }
}

void SlotSimulator::Release(RegisterId id, int64_t fill, int phase) {
  FillState& state = registers_[id].live.at(fill);
  if (phase == 0) {
    --state.phase_zero_pending;
  } else {
    state.phase_one_pending = false;
  }
  FreeCompletedFills(id);
}

// Launch and completion at once: claim slots of fills that begin, then (as on completion)
// release inputs, then complete fills that end.
void SlotSimulator::Fire(TaskId id) {
  const TaskDef& task = tasks_.task(id);
  const int64_t first_piece = next_firing_[id] * task.period;
  const int64_t end_piece = first_piece + task.period;
  for (RegisterId output : task.outputs) {
    const TaskRegister& reg = tasks_.register_at(output);
    if (first_piece % reg.period != 0) continue;
    RegisterState& state = registers_[output];
    FillState fill;
    for (const RegisterReader& reader : reg.readers) {
      if (reader.phase == 0) ++fill.phase_zero_pending;
      if (reader.phase == 1) fill.phase_one_pending = true;
    }
    state.live[state.begun++] = fill;
  }
  for (RegisterId input : task.inputs) {
    const int64_t period = tasks_.register_at(input).period;
    if (end_piece % period == 0) Release(input, first_piece / period, tasks_.PhaseOf(input, id));
  }
  for (RegisterId output : task.outputs) {
    const int64_t period = tasks_.register_at(output).period;
    if (end_piece % period != 0) continue;
    registers_[output].completed = first_piece / period + 1;
    FreeCompletedFills(output);
  }
  ++next_firing_[id];
}

SimulationResult SlotSimulator::Run() {
  SimulationResult result;
  for (const TaskDef& task : tasks_.tasks()) result.expected_firings += total_pieces_ / task.period;
  bool progressed = true;
  while (progressed) {
    progressed = false;
    for (TaskId id = 0; id < static_cast<TaskId>(next_firing_.size()); ++id) {
      while (CanFire(id)) {
        Fire(id);
        ++result.firings;
        progressed = true;
      }
    }
  }
  result.finished = result.firings == result.expected_firings;
  for (TaskId id = 0; id < static_cast<TaskId>(next_firing_.size()); ++id) {
    if (next_firing_[id] < total_pieces_ / tasks_.task(id).period) {
      result.waits.push_back(DescribeWait(id));
    }
  }
  return result;
}

std::string SlotSimulator::HoldersOf(RegisterId id, int64_t fill) const {
  const TaskRegister& reg = tasks_.register_at(id);
  if (fill >= registers_[id].completed) {
    return "is not complete yet";
  }
  std::string holders;
  for (const RegisterReader& reader : reg.readers) {
    const TaskDef& task = tasks_.task(reader.task);
    // A reader still holds the fill unless its next firing already starts past the fill.
    int64_t next_piece = next_firing_[reader.task] * task.period;
    if (next_piece < (fill + 1) * reg.period) {
      holders += (holders.empty() ? "'" : ", '") + task.name + "'";
    }
  }
  return "is still held by " + holders;
}

std::string SlotSimulator::DescribeWait(TaskId id) const {
  const TaskDef& task = tasks_.task(id);
  const int64_t firing = next_firing_[id];
  const int64_t first_piece = firing * task.period;
  std::string text = "actor '" + task.name + "' (firing " + std::to_string(firing) + " of " +
                     std::to_string(total_pieces_ / task.period) + ") waits for ";
  for (RegisterId input : task.inputs) {
    const TaskRegister& reg = tasks_.register_at(input);
    const int64_t fill = first_piece / reg.period;
    if (InputAvailable(input, fill, tasks_.PhaseOf(input, id))) continue;
    return text + "fill " + std::to_string(fill) + " of register '" + reg.name + "' from '" +
           tasks_.task(reg.producer).name + "'";
  }
  for (RegisterId output : task.outputs) {
    const TaskRegister& reg = tasks_.register_at(output);
    const RegisterState& state = registers_[output];
    if (first_piece % reg.period != 0 || state.begun - state.freed < reg.slots) continue;
    return text + "a free slot of register '" + reg.name + "' (" + std::to_string(reg.slots) +
           (reg.slots == 1 ? " slot" : " slots") + "): fill " + std::to_string(state.freed) + " " +
           HoldersOf(output, state.freed);
  }
  return text + "nothing it lacks";
}

}  // namespace compiler
}  // namespace softwire
