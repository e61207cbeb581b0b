// plan_memory: where everything lives in each device's arena (meet_budget judges the fit,
// after share_memory).
//
// Per device, in order: every register's slots (register id order), every actor's workspace,
// every actor's persistent state, each region starting on a 64-byte boundary. Regions never
// overlap here; share_memory_pass.cc later lets registers that are never live together share
// bytes, which only shrinks the arena.
#include <algorithm>

#include "compiler/passes/passes.h"
#include "compiler/physical/op_cost.h"

namespace softwire {
namespace compiler {
namespace {

constexpr int64_t kRegionAlignment = 64;

int64_t Align(int64_t offset) {
  return (offset + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment;
}

int64_t StateBytesOf(const Compilation& compilation, const TaskDef& task) {
  const OpDefinition& definition = *compilation.registry().Find(task.op_type);
  if (!definition.state_bytes) return 0;
  return TaskStateBytes(definition, compilation.tasks.InputTypes(task.id),
                        compilation.tasks.OutputTypes(task.id), task.attributes);
}

// Docs/OPS.md: no kernel needs planned scratch today (a product epilogue's c lands in one of
// its outputs, or where all are bfloat16 in a band kept per kernel thread); a kernel that does
// declares its size there and this is where it gets planned.
int64_t WorkspaceBytesOf(const TaskDef&) {
  return 0;
}

// The registers and tasks of each device, in id order.
struct DeviceContents {
  std::vector<RegisterId> registers;
  std::vector<TaskId> tasks;
};

DeviceMemoryPlan PlanDevice(Compilation& compilation, const DeviceContents& contents) {
  TaskGraph& tasks = compilation.tasks;
  DeviceMemoryPlan memory;
  int64_t offset = 0;
  for (RegisterId id : contents.registers) {
    TaskRegister& reg = tasks.mutable_register(id);
    reg.offset = Align(offset);
    offset = reg.offset + reg.slots * reg.bytes_per_slot;
  }
  memory.register_bytes = Align(offset);
  for (TaskId id : contents.tasks) {
    TaskDef& task = tasks.mutable_task(id);
    task.workspace_bytes = WorkspaceBytesOf(task);
    task.workspace_offset = Align(offset);
    offset = task.workspace_offset + task.workspace_bytes;
  }
  memory.workspace_bytes = Align(offset) - memory.register_bytes;
  for (TaskId id : contents.tasks) {
    TaskDef& task = tasks.mutable_task(id);
    task.state_bytes = StateBytesOf(compilation, task);
    task.state_offset = Align(offset);
    offset = task.state_offset + task.state_bytes;
  }
  memory.planned_bytes = Align(offset);
  memory.state_bytes = memory.planned_bytes - memory.register_bytes - memory.workspace_bytes;
  return memory;
}

}  // namespace

Status PlanMemoryPass(Compilation& compilation) {
  std::vector<DeviceContents> contents(compilation.devices.size());
  for (const TaskRegister& reg : compilation.tasks.registers()) {
    contents[reg.device].registers.push_back(reg.id);
  }
  for (const TaskDef& task : compilation.tasks.tasks())
    contents[task.device].tasks.push_back(task.id);
  compilation.device_memory.clear();
  for (const TargetDevice& device : compilation.devices) {
    compilation.device_memory.push_back(PlanDevice(compilation, contents[device.id]));
  }
  compilation.memory_planned = true;
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
