// insert_send_recv: every copy whose source register lies on another node becomes a send/recv
// pair (docs/DATA_PLANE.md). The send runs on the source device's copy queue (queue 1, like a
// copy) and writes the source's bytes into a "wire" register on the destination device: the
// bytes in flight land there, and its slots bound how many fills are in flight. The copy itself
// becomes the recv: it reads the wire register (now on its own device) and writes the copy's
// output as before, with the same op (`copy`, or `slice` for a slice-copy), so nothing
// downstream changes. The send's Ready and the recv's Release cross the nodes as protocol
// messages (docs/PROTOCOL.md); within one process the send's bytes are a memcpy into the peer's
// slot, between processes they travel over the data plane (runtime/net/).
//
// A copy that reads a range of its source (a range view, fold_views) leaves the range to the
// send: the send reads those bytes where they lie and the wire register holds only them.
//
// Names: the copy "<value>@<device>" becomes "recv:<value>@<device>"; its send is
// "send:<value>@<device>" and the wire register "wire:<value>@<device>".
//
// Runs after fold_views and before plan_registers, so registers, memory and costs are planned
// for the pairs. Plans whose devices are all on one node are unchanged.
#include <string>
#include <vector>

#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

// Replaces copy `recv_id` (reading a register of another node) by a send and a recv.
void SplitCopy(Compilation& compilation, TaskId recv_id) {
  TaskGraph& tasks = compilation.tasks;
  const TaskDef copy = tasks.task(recv_id);
  const RegisterId source_id = copy.inputs[0];
  const TaskRegister source = tasks.register_at(source_id);
  const std::string value = tasks.register_at(copy.outputs[0]).name;

  TaskDef send;
  send.name = "send:" + value;
  send.kind = proto::ACTOR_KIND_SEND;
  send.device = source.device;
  send.queue = 1;  // Like a copy: transfers do not wait behind compute.
  send.period = copy.period;
  send.firings = copy.firings;
  send.op_type = "copy";  // Moves the bytes unchanged (priced by estimate_costs as a transfer).
  send.logical_op = -1;
  send.stage = copy.stage;
  const TaskId send_id = tasks.AddTask(std::move(send));

  TaskRegister wire;
  wire.name = "wire:" + value;
  wire.producer = send_id;
  wire.device = copy.device;
  // What the copy read: of a range view (fold_views), the send sends the range.
  const TensorType sent = tasks.InputType(recv_id, 0);
  const int64_t offset = tasks.InputOffset(recv_id, 0);
  wire.type = sent;
  wire.period = copy.period;
  wire.logical_tensor = source.logical_tensor;
  const RegisterId wire_id = tasks.AddRegister(std::move(wire));

  // The send takes the copy's place among the source's readers (same position and phase).
  int phase = 0;
  for (RegisterReader& reader : tasks.mutable_register(source_id).readers) {
    if (reader.task == recv_id) {
      reader.task = send_id;
      phase = reader.phase;
    }
  }
  TaskDef& send_task = tasks.mutable_task(send_id);
  send_task.inputs.push_back(source_id);
  if (!copy.input_offsets.empty()) {
    send_task.input_types = {sent};
    send_task.input_offsets = {offset};
  }
  tasks.mutable_register(wire_id).readers.push_back(RegisterReader{recv_id, phase});
  TaskDef& recv = tasks.mutable_task(recv_id);
  recv.kind = proto::ACTOR_KIND_RECV;
  recv.name = "recv:" + value;
  recv.inputs[0] = wire_id;
  recv.input_types.clear();  // It reads the wire register whole.
  recv.input_offsets.clear();
}

}  // namespace

Status InsertSendRecvPass(Compilation& compilation) {
  TaskGraph& tasks = compilation.tasks;
  const size_t original_tasks = tasks.tasks().size();
  for (size_t id = 0; id < original_tasks; ++id) {
    const TaskDef& task = tasks.task(static_cast<TaskId>(id));
    if (task.kind != proto::ACTOR_KIND_COPY || task.inputs.size() != 1) continue;
    const int source_device = tasks.register_at(task.inputs[0]).device;
    if (compilation.devices[source_device].node == compilation.devices[task.device].node) {
      continue;
    }
    SplitCopy(compilation, static_cast<TaskId>(id));
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
