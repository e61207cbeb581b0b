// plan_registers: slots and bytes per slot of every register (docs/PARALLELISM.md, "Pipeline
// training and slots").
//
//   per-step values (variables, accumulated gradients, their boxing) and any register an
//     update writes in place: 1 slot (a phase-1 reader needs exactly one);
//   a forward activation a backward op on stage s of p reads: p - s slots (capped at the
//     pieces of a step), so stage s can run that many pieces ahead of their backward, as 1F1B
//     does, and never more;
//   registers that cross devices (a copy reads or writes them): 2, so the transfer overlaps
//     the producer's next piece;
//   source outputs: 2 where the next piece's fill can overlap this piece's work, 1 where it
//     cannot (SourceFillOverlaps below; CompileOptions::source_slots forces either);
//   a wire register (a send writes it, insert_send_recv): as many as carry about 4 MiB, from 2
//     to 8: its slots bound the fills in flight between two nodes, and a small fill's round
//     trip (Ready over, Release back) costs more than its bytes (docs/DATA_PLANE.md);
//   everything else: 1.
// fit_memory may lower these toward 1 when a device's memory is short.
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

bool IsForward(const LogicalGraph& graph, TensorId tensor) {
  if (tensor < 0) return false;
  OpRole role = graph.op(graph.tensor(tensor).producer).placement.role;
  return role == OpRole::kForward || role == OpRole::kSource;
}

// Whether a source's second slot buys overlap: with it the source may fill piece i + 1 while
// piece i's readers still hold slot i, which saves time only when that fill runs beside other
// work rather than in its place (docs/DECISIONS.md, "A source's second slot"):
//   - a device that is not a cpu device runs its launches asynchronously (a cuda stream, a sim
//     queue per index): with a free slot the host enqueues the next fill ahead, and the queue
//     need not wait for a release's round trip through the host before it;
//   - a plan over several devices (dp, tp, pp): the source's device waits on the others
//     within a step (a gradient all-reduce, boxing, the other stages' pieces), and the next
//     fill runs in that wait.
// Otherwise the plan is one cpu device, whose compute strand runs one kernel at a time: the fill
// of piece i + 1 only moves on the strand, whatever the pieces of a step, and buys nothing.
bool SourceFillOverlaps(const Compilation& compilation, const TaskDef& source) {
  if (compilation.parallel.devices() > 1) return true;
  for (const TargetDevice& device : compilation.devices) {
    if (device.id == source.device) return device.spec.kind() != proto::DEVICE_KIND_CPU;
  }
  return true;  // A device the plan does not describe: keep the overlap.
}

int SourceSlots(const Compilation& compilation, const TaskDef& source) {
  const int forced = compilation.options().source_slots;
  if (forced > 0) return forced;
  return SourceFillOverlaps(compilation, source) ? 2 : 1;
}

int SlotsOf(const Compilation& compilation, const TaskRegister& reg) {
  const TaskGraph& tasks = compilation.tasks;
  const LogicalGraph& graph = compilation.graph;
  const TaskDef& producer = tasks.task(reg.producer);
  const int64_t per_step = compilation.schedule.pieces_per_step;
  bool in_place = false;
  bool copied_out = false;
  bool read_backward = false;
  for (const RegisterReader& reader : reg.readers) {
    const TaskDef& task = tasks.task(reader.task);
    in_place |= reader.phase == 1;
    copied_out |= task.kind == proto::ACTOR_KIND_COPY || task.kind == proto::ACTOR_KIND_SEND;
    read_backward |=
        task.logical_op >= 0 && graph.op(task.logical_op).placement.role == OpRole::kBackward;
  }
  if (in_place || producer.kind == proto::ACTOR_KIND_VARIABLE || reg.period > 1) return 1;
  int slots = 1;
  if (producer.kind == proto::ACTOR_KIND_SEND) {
    constexpr int64_t kWireBytesInFlight = int64_t{4} << 20;
    const int64_t bytes = std::max<int64_t>(1, reg.type.NumBytes());
    return static_cast<int>(std::clamp<int64_t>((kWireBytesInFlight + bytes - 1) / bytes, 2, 8));
  }
  if (producer.kind == proto::ACTOR_KIND_SOURCE) slots = SourceSlots(compilation, producer);
  if (producer.kind == proto::ACTOR_KIND_COPY || producer.kind == proto::ACTOR_KIND_RECV ||
      copied_out) {
    slots = 2;
  }
  if (read_backward && IsForward(graph, reg.logical_tensor)) {
    const int in_flight = compilation.parallel.pipeline - producer.stage;
    slots = std::max<int>(slots, static_cast<int>(std::min<int64_t>(in_flight, per_step)));
  }
  return slots;
}

}  // namespace

Status PlanRegistersPass(Compilation& compilation) {
  TaskGraph& tasks = compilation.tasks;
  for (TaskRegister& reg : tasks.mutable_registers()) {
    reg.slots = SlotsOf(compilation, reg);
    reg.bytes_per_slot = std::max(kSlotAlignment, RoundUp(reg.type.NumBytes(), kSlotAlignment));
  }
  compilation.registers_planned = true;
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
