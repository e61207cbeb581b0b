// plan_registers: slots and bytes per slot of every register.
//
// Source outputs get two slots, so the source loads piece p+1 while compute reads piece p;
// every other register one: a variable must have one (its update writes it in place, phase
// 1), and with one slot per-piece values already pipeline across actors. Deeper pipelines
// (several pieces in flight per stage) will derive more slots from the schedule here.
#include <algorithm>

#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

// Arena alignment of every slot (a cache line; enough for any vector load).
constexpr int64_t kSlotAlignment = 64;

int64_t RoundUp(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

}  // namespace

Status PlanRegistersPass(Compilation& compilation) {
  TaskGraph& tasks = compilation.tasks;
  for (TaskRegister& reg : tasks.mutable_registers()) {
    bool from_source = tasks.task(reg.producer).kind == proto::ACTOR_KIND_SOURCE;
    reg.slots = from_source ? 2 : 1;
    reg.bytes_per_slot = std::max(kSlotAlignment, RoundUp(reg.type.NumBytes(), kSlotAlignment));
  }
  compilation.registers_planned = true;
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
