// fit_memory: every device's registers, workspaces and actor state must fit its memory budget
// (docs/PARALLELISM.md, "Pipeline training and slots"). On a device over budget, slots are
// lowered toward 1, largest registers first, until it fits; when even one slot everywhere does
// not fit, ResourceExhausted names the device, the bytes the plan needs at least and the
// budget. plan_memory then lays the arena out.
#include <algorithm>

#include "base/format_bytes.h"
#include "compiler/ir/graph_text.h"
#include "compiler/passes/passes.h"
#include "compiler/physical/op_cost.h"

namespace softwire {
namespace compiler {
namespace {

constexpr int64_t kRegionAlignment = 64;

int64_t Align(int64_t bytes) {
  return (bytes + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment;
}

struct DeviceNeeds {
  std::vector<TaskRegister*> registers;
  int64_t register_bytes = 0;
  int64_t state_bytes = 0;

  int64_t total() const { return register_bytes + state_bytes; }
};

std::string LargestRegisters(std::vector<TaskRegister*> registers) {
  std::sort(registers.begin(), registers.end(), [](const TaskRegister* a, const TaskRegister* b) {
    return a->slots * a->bytes_per_slot > b->slots * b->bytes_per_slot;
  });
  std::string text;
  for (size_t i = 0; i < registers.size() && i < 3; ++i) {
    text += (i > 0 ? ", '" : "'") + registers[i]->name + "' " +
            std::to_string(registers[i]->slots) + " x " + FormatBytes(registers[i]->bytes_per_slot);
  }
  return text;
}

Status TooSmall(const TargetDevice& device, const DeviceNeeds& needs) {
  const int64_t budget = device.spec.memory_bytes();
  return ResourceExhaustedError("device '" + device.FullName() + "': the plan needs at least " +
                                std::to_string(needs.total()) + " bytes (" +
                                FormatBytes(needs.total()) + ": registers " +
                                FormatBytes(needs.register_bytes) + " with one slot each, state " +
                                FormatBytes(needs.state_bytes) + ") but its memory budget is " +
                                std::to_string(budget) + " bytes (" + FormatBytes(budget) +
                                "); largest registers: " + LargestRegisters(needs.registers));
}

}  // namespace

Status FitMemoryPass(Compilation& compilation) {
  TaskGraph& tasks = compilation.tasks;
  std::vector<DeviceNeeds> needs(compilation.devices.size());
  for (TaskRegister& reg : tasks.mutable_registers()) {
    DeviceNeeds& device = needs[reg.device];
    device.registers.push_back(&reg);
    device.register_bytes += reg.slots * reg.bytes_per_slot;
  }
  for (const TaskDef& task : tasks.tasks()) {
    const OpDefinition& definition = *compilation.registry().Find(task.op_type);
    if (!definition.state_bytes) continue;
    needs[task.device].state_bytes += Align(TaskStateBytes(
        definition, tasks.InputTypes(task.id), tasks.OutputTypes(task.id), task.attributes));
  }
  for (const TargetDevice& device : compilation.devices) {
    DeviceNeeds& device_needs = needs[device.id];
    const int64_t budget = device.spec.memory_bytes();
    if (budget == 0 || device_needs.total() <= budget) continue;
    std::vector<TaskRegister*> lowered = device_needs.registers;
    std::stable_sort(lowered.begin(), lowered.end(),
                     [](const TaskRegister* a, const TaskRegister* b) {
                       return a->bytes_per_slot > b->bytes_per_slot;
                     });
    for (TaskRegister* reg : lowered) {
      if (device_needs.total() <= budget) break;
      device_needs.register_bytes -= (reg->slots - 1) * reg->bytes_per_slot;
      reg->slots = 1;
    }
    if (device_needs.total() > budget) return TooSmall(device, device_needs);
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
