// meet_budget: the fit check of every device's memory budget, on the plan as it will run: after
// share_memory let registers never live together share bytes (docs/PARALLELISM.md, "A memory
// budget the compiler meets"). The budget driver (compiler/memory_budget.h) reads the error and
// Compilation::budget.planned to try recompute and sharding before giving up.
#include <algorithm>

#include "base/format_bytes.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

std::string LargestRegisters(const proto::Plan& plan, int device) {
  std::vector<const proto::RegisterDef*> registers;
  for (const proto::RegisterDef& reg : plan.register_def()) {
    if (reg.device() == device) registers.push_back(&reg);
  }
  std::stable_sort(registers.begin(), registers.end(),
                   [](const proto::RegisterDef* a, const proto::RegisterDef* b) {
                     return a->slots() * a->bytes_per_slot() > b->slots() * b->bytes_per_slot();
                   });
  std::string text;
  for (size_t i = 0; i < registers.size() && i < 3; ++i) {
    if (i > 0) text += ", ";
    text += "'" + registers[i]->name() + "' " + std::to_string(registers[i]->slots()) + " x " +
            FormatBytes(registers[i]->bytes_per_slot());
  }
  return text;
}

}  // namespace

std::string OverBudgetMessage(const Compilation& compilation, int device, int64_t least_bytes) {
  const TargetDevice& target = compilation.devices[static_cast<size_t>(device)];
  const int64_t budget = target.spec.memory_bytes();
  const DeviceMemoryPlan& memory = compilation.device_memory[static_cast<size_t>(device)];
  return "device '" + target.FullName() + "': the plan needs at least " +
         std::to_string(least_bytes) + " bytes (" + FormatBytes(least_bytes) +
         "; this plan: registers " + FormatBytes(memory.register_bytes) + " after reuse, state " +
         FormatBytes(memory.state_bytes) + ") but its memory budget is " + std::to_string(budget) +
         " bytes (" + FormatBytes(budget) +
         "); largest registers: " + LargestRegisters(*compilation.plan, device);
}

Status MeetBudgetPass(Compilation& compilation) {
  BudgetReport& report = compilation.budget;
  report.planned.assign(compilation.devices.size(), 0);
  for (const TargetDevice& device : compilation.devices) {
    report.planned[device.id] = compilation.device_memory.at(device.id).planned_bytes;
  }
  for (const TargetDevice& device : compilation.devices) {
    const int64_t budget = device.spec.memory_bytes();
    const int64_t planned = report.planned[device.id];
    if (budget == 0 || planned <= budget) continue;
    return ResourceExhaustedError(OverBudgetMessage(compilation, device.id, planned));
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
