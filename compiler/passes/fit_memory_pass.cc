// fit_memory: the first saving under a memory budget (docs/PARALLELISM.md, "Pipeline training
// and slots" and "A memory budget the compiler meets"). On a device whose registers and actor
// state side by side (before lifetime-based reuse, which only shrinks them) exceed its budget,
// slots are lowered toward 1, largest registers first, until it fits or every slot is 1. It
// never fails: meet_budget judges the plan after reuse, and the budget driver
// (compiler/memory_budget.h) then tries recompute and sharding. Compilation::budget records
// what it saved.
#include <algorithm>

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
  BudgetReport& report = compilation.budget;
  report.slot_bytes_saved.assign(compilation.devices.size(), 0);
  report.slots_lowered = 0;
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
      if (reg->slots == 1) continue;
      const int64_t saved = (reg->slots - 1) * reg->bytes_per_slot;
      device_needs.register_bytes -= saved;
      report.slot_bytes_saved[device.id] += saved;
      ++report.slots_lowered;
      reg->slots = 1;
    }
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
