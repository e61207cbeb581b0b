// fold_views: reshapes and foldable transposes become views of their input's register instead
// of copies (docs/PROTOCOL.md, "Views").
//
// Every tensor in a slot is dense and row-major, so a reshape's output holds exactly its input's
// bytes: its readers may read the input's register, each through its own kernel descriptor of
// the reshaped type (plan.proto KernelDef.input; the engines bind a kernel's input by that
// descriptor, not by the register's). A transpose of the last two axes is what a matmul reads
// anyway when its transpose flag is set: its readers read the untransposed register with the
// flag flipped, which computes the same products. A transpose that keeps the last axis last,
// read only by batch_matmuls (attention's head split, [B, T, H, D] -> [B, H, T, D]), is read
// strided: each matrix's rows stay contiguous, so the kernel takes each batch's matrix where it
// lies with a row stride (the `a_perm`/`b_perm` kernel attributes, docs/OPS.md). Either way the
// task and its register go.
//
// The readers of the view become readers of the underlying register, so its fills are released
// only when they are done too: plan_registers then gives it the slots they need (a forward
// activation read backward keeps p - s), share_memory sees their lives, and the deadlock check
// runs on the result. Runs on the task graph before plan_registers, so every later pass plans
// the folded graph.
//
// A `flat_split` is folded into range views (plan/input_ranges.h): its outputs lie one after
// another in its input's bytes, so each reader of chunk q reads bytes [o_q, o_q + bytes(q)) of
// the input's register where they lie (TaskDef::input_offsets) and the split and its chunk
// registers go: the ring all-reduce's sends and adds read the gradient where it lies. The slot
// rules, as for a reshape: the input and every chunk have the split's period, so fill s of a
// chunk is made from fill s of the input and a reader's firing i needs the same fill of either
// (no phase shifts); every chunk reader reads in phase 0 (a phase-1 reader would write a chunk
// in place, inside another register's bytes); a reader reads only one chunk and not the input
// itself (it would read one register twice); and it is a transfer (copy, or the send
// insert_send_recv makes of it, which then sends only the range) or a boxing task, which
// fuse_elementwise and recompute_activations never merge or clone, so no later pass has to carry
// an offset. Each reader becomes a consumer of the input register and releases its fill as it
// released its chunk's, so the input's fill lives until its last chunk is read (plan_registers
// gives it the slots its copied-out readers need) and reuse sees those lives. `view_bytes`
// counts one fill of every chunk register that is gone.
//
// A view is folded only where nothing else sees the difference: every reader of the view is a
// compute task reading it in phase 0 that does not read the input too (a kernel reads each
// register once, separate_repeated_inputs); the input has the same period as the view. An
// input with a phase-1 reader (a variable its update writes in place) may be viewed: the view's
// readers read it in phase 0, and the writer waits for their release as for any other. A transpose
// also needs every reader to read it as it is (not reshaped) with a matmul or batch_matmul that can
// take the flag there (matmul transposes only a rank-2 left input), or a batch_matmul for a strided
// read.
#include <algorithm>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

// The single input and output of a reshape or transpose task.
struct ViewEdge {
  RegisterId input = -1;
  RegisterId output = -1;
};

// The common conditions of a view: see the file comment.
bool MayFold(const TaskGraph& tasks, const TaskDef& task, ViewEdge* edge) {
  if (task.kind != proto::ACTOR_KIND_COMPUTE || task.inputs.size() != 1 ||
      task.outputs.size() != 1) {
    return false;
  }
  edge->input = task.inputs[0];
  edge->output = task.outputs[0];
  const TaskRegister& input = tasks.register_at(edge->input);
  const TaskRegister& output = tasks.register_at(edge->output);
  if (input.device != output.device || input.period != output.period ||
      task.period != input.period || input.type.NumBytes() != output.type.NumBytes()) {
    return false;
  }
  for (const RegisterReader& reader : output.readers) {
    const TaskDef& consumer = tasks.task(reader.task);
    if (reader.phase != 0 || consumer.kind != proto::ACTOR_KIND_COMPUTE) return false;
    for (RegisterId read : consumer.inputs) {
      if (read == edge->input) return false;
    }
  }
  return true;
}

bool SwapsLastTwoAxes(const std::vector<int64_t>& perm) {
  const size_t rank = perm.size();
  if (rank < 2) return false;
  for (size_t axis = 0; axis + 2 < rank; ++axis) {
    if (perm[axis] != static_cast<int64_t>(axis)) return false;
  }
  return perm[rank - 2] == static_cast<int64_t>(rank - 1) &&
         perm[rank - 1] == static_cast<int64_t>(rank - 2);
}

// Keeps the last axis last: each matrix a batch_matmul reads through it has contiguous rows.
bool KeepsLastAxis(const std::vector<int64_t>& perm) {
  return !perm.empty() && perm.back() == static_cast<int64_t>(perm.size()) - 1;
}

// How one reader of a transpose reads its input instead: at input position `input`, with
// `flag` flipped (a swap of the last two axes) or with `perm_attribute` set to the transpose's
// perm (a strided view, batch_matmul only).
struct TransposeRead {
  TaskId task = -1;
  size_t input = 0;
  std::string flag;
  std::string perm_attribute;
};

// False when `consumer` cannot read `view` (a transpose by `perm`) from the transpose's input.
bool ReadFor(const TaskGraph& tasks, const TaskDef& consumer, RegisterId view,
             const std::vector<int64_t>& perm, TransposeRead* read) {
  if (consumer.op_type != "matmul" && consumer.op_type != "batch_matmul") return false;
  if (consumer.inputs.size() != 2) return false;
  const TaskRegister& reg = tasks.register_at(view);
  read->task = consumer.id;
  read->input = consumer.inputs[0] == view ? 0 : 1;
  if (consumer.inputs[read->input] != view) return false;
  // The consumer must read the transpose as it is, not reshaped.
  if (!consumer.input_types.empty() && !(consumer.input_types[read->input] == reg.type)) {
    return false;
  }
  const std::string name = read->input == 0 ? "a" : "b";
  if (SwapsLastTwoAxes(perm)) {
    if (read->input == 0 && consumer.op_type == "matmul" && reg.type.shape.rank() != 2) {
      return false;
    }
    read->flag = "transpose_" + name;
    return true;
  }
  if (consumer.op_type != "batch_matmul" || !KeepsLastAxis(perm)) return false;
  read->perm_attribute = name + "_perm";
  const AttributeValue* existing = consumer.attributes.Find(read->perm_attribute);
  return existing == nullptr || std::get<std::vector<int64_t>>(*existing).empty();
}

// One fill of the register a folded view no longer writes, as plan_registers would have sized
// its slot (tensor bytes rounded up to the arena alignment): what the view saved, reported in
// PlanDevice.view_bytes.
void CountSaved(const TaskGraph& tasks, const ViewEdge& edge, std::map<int, int64_t>* saved) {
  constexpr int64_t kAlignment = 64;
  const TaskRegister& output = tasks.register_at(edge.output);
  (*saved)[output.device] += (output.type.NumBytes() + kAlignment - 1) / kAlignment * kAlignment;
}

bool FoldReshape(TaskGraph& tasks, const TaskDef& task, std::vector<bool>* removed,
                 std::map<int, int64_t>* saved) {
  ViewEdge edge;
  if (task.op_type != "reshape" || !MayFold(tasks, task, &edge)) return false;
  CountSaved(tasks, edge, saved);
  const TaskId id = task.id;
  tasks.MoveReaders(edge.output, edge.input);
  (*removed)[id] = true;
  return true;
}

// The byte at which each output of flat_split `task` starts in its input: the outputs lie one
// after another, each of its own type's bytes.
std::vector<int64_t> ChunkOffsets(const TaskGraph& tasks, const TaskDef& task) {
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (RegisterId output : task.outputs) {
    offsets.push_back(offset);
    offset += tasks.register_at(output).type.NumBytes();
  }
  offsets.push_back(offset);  // The end: the bytes the split reads.
  return offsets;
}

// The conditions of a range view (see the file comment): every reader of every chunk is a
// transfer or boxing task that reads it in phase 0 as a kernel input, reads no other chunk of
// the split and not its input.
bool MayFoldSplit(const TaskGraph& tasks, const TaskDef& task) {
  if (task.op_type != "flat_split" || task.inputs.size() != 1 || task.ordering_inputs != 0 ||
      task.outputs.empty()) {
    return false;
  }
  const TaskRegister& input = tasks.register_at(task.inputs[0]);
  if (input.period != task.period || ChunkOffsets(tasks, task).back() != input.type.NumBytes() ||
      tasks.InputOffset(task.id, 0) != 0) {
    return false;
  }
  std::vector<TaskId> seen;
  for (RegisterId chunk : task.outputs) {
    const TaskRegister& output = tasks.register_at(chunk);
    if (output.device != input.device || output.period != input.period ||
        output.type.dtype != input.type.dtype) {
      return false;
    }
    for (const RegisterReader& reader : output.readers) {
      const TaskDef& consumer = tasks.task(reader.task);
      if (reader.phase != 0 ||
          (consumer.kind != proto::ACTOR_KIND_BOXING && consumer.kind != proto::ACTOR_KIND_COPY)) {
        return false;
      }
      if (std::find(seen.begin(), seen.end(), consumer.id) != seen.end()) return false;
      seen.push_back(consumer.id);
      const size_t kernel_inputs = tasks.KernelInputCount(consumer.id);
      for (size_t k = 0; k < consumer.inputs.size(); ++k) {
        if (consumer.inputs[k] == task.inputs[0]) return false;
        if (consumer.inputs[k] == chunk && k >= kernel_inputs) return false;
      }
    }
  }
  return true;
}

// A flat_split whose chunks every reader can read where they lie: each reader reads its chunk
// as a range of the split's input, and the split goes.
bool FoldSplit(TaskGraph& tasks, const TaskDef& task, std::vector<bool>* removed,
               std::map<int, int64_t>* saved) {
  if (!MayFoldSplit(tasks, task)) return false;
  const std::vector<int64_t> offsets = ChunkOffsets(tasks, task);
  const RegisterId input = task.inputs[0];
  const std::vector<RegisterId> chunks = task.outputs;
  const TaskId id = task.id;
  for (size_t q = 0; q < chunks.size(); ++q) {
    CountSaved(tasks, ViewEdge{input, chunks[q]}, saved);
    tasks.MoveReadersToRange(chunks[q], input, offsets[q]);
  }
  (*removed)[id] = true;
  return true;
}

bool FoldTranspose(TaskGraph& tasks, const TaskDef& task, std::vector<bool>* removed,
                   std::map<int, int64_t>* saved) {
  ViewEdge edge;
  if (task.op_type != "transpose" || !MayFold(tasks, task, &edge)) return false;
  const std::vector<int64_t> perm = task.attributes.GetInts("perm");
  std::vector<TransposeRead> reads;
  for (const RegisterReader& reader : tasks.register_at(edge.output).readers) {
    reads.emplace_back();
    if (!ReadFor(tasks, tasks.task(reader.task), edge.output, perm, &reads.back())) return false;
  }
  CountSaved(tasks, edge, saved);
  const TaskId id = task.id;
  // What the transpose read: its input register, or a view of it (a reshape folded before).
  const TensorType input_type = tasks.InputTypes(id)[0];
  tasks.MoveReaders(edge.output, edge.input);
  for (const TransposeRead& read : reads) {
    TaskDef& consumer = tasks.mutable_task(read.task);
    if (!read.flag.empty()) {
      consumer.attributes.Set(read.flag, !consumer.attributes.GetBool(read.flag));
      consumer.input_types[read.input] = input_type;
    } else {
      consumer.attributes.Set(read.perm_attribute, perm);  // Reads the transposed type strided.
    }
  }
  (*removed)[id] = true;
  return true;
}

}  // namespace

Status FoldViewsPass(Compilation& compilation) {
  if (!compilation.options().fold_views) return Status::Ok();
  TaskGraph& tasks = compilation.tasks;
  std::vector<bool> removed(tasks.tasks().size(), false);
  bool any = false;
  for (size_t i = 0; i < tasks.tasks().size(); ++i) {
    const TaskDef& task = tasks.task(static_cast<TaskId>(i));
    any |= FoldReshape(tasks, task, &removed, &compilation.view_bytes) ||
           FoldTranspose(tasks, task, &removed, &compilation.view_bytes) ||
           FoldSplit(tasks, task, &removed, &compilation.view_bytes);
  }
  if (any) tasks.RemoveTasks(removed);
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
