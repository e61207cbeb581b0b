// TaskGraph: the compiler's physical IR. One TaskDef per actor the plan will have, one
// TaskRegister per register, already bound to devices. It is the plan before its last
// formatting step (emit_plan), kept in plain structs so passes annotate it with slots, memory
// offsets and costs without touching protobuf.
//
// Ids are indices and never reused. Threading: none; owned by one compilation.
#ifndef SOFTWIRE_COMPILER_IR_TASK_GRAPH_H_
#define SOFTWIRE_COMPILER_IR_TASK_GRAPH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/attribute_map.h"
#include "compiler/ir/logical_graph.h"
#include "compiler/ir/tensor_type.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace compiler {

using TaskId = int64_t;
using RegisterId = int64_t;

// One reader of a register. Phase 1 is the in-place writer (an update actor) that gets the
// fill after every phase-0 reader released it (docs/PROTOCOL.md, "Slots come back").
struct RegisterReader {
  TaskId task = -1;
  int phase = 0;
};

struct TaskRegister {
  RegisterId id = -1;
  std::string name;
  TaskId producer = -1;
  int device = -1;
  TensorType type;
  int64_t period = 1;                   // Pieces per fill.
  std::vector<RegisterReader> readers;  // In the order the readers were added.
  TensorId logical_tensor = -1;
  // Set by plan_registers.
  int slots = 0;
  int64_t bytes_per_slot = 0;
  // Set by plan_memory.
  int64_t offset = -1;
};

// The slice of a logical value a source or variable actor holds (plan.proto SourceActorDef,
// VariableActorDef): for a source, samples [begin, end) of each micro-batch (split_axis 0);
// for a variable, [begin, end) of split_axis, or split_axis -1 for the whole.
struct TaskPart {
  int split_axis = -1;
  int64_t begin = 0;
  int64_t end = 0;
};

struct TaskDef {
  TaskId id = -1;
  std::string name;
  proto::ActorKind kind = proto::ACTOR_KIND_UNSPECIFIED;
  int device = -1;
  int queue = 0;
  std::vector<RegisterId> inputs;  // Kernel input order, then the ordering inputs.
  // Empty, or one per input: the type the kernel reads that input as. It differs from the
  // register's type only for a view (fold_views): the same bytes, reshaped.
  std::vector<TensorType> input_types;
  // Empty, or one per input: the byte of the input register's slot the kernel's read starts at
  // (a range view, fold_views: input_types[k] then may hold fewer bytes than the register,
  // plan/input_ranges.h). AddReader appends 0 when it is not empty.
  std::vector<int64_t> input_offsets;
  // The last `ordering_inputs` of `inputs` are waited for, never read by the kernel
  // (order_weight_gradients; plan/ordering_inputs.h). Add them last: AddReader appends.
  int ordering_inputs = 0;
  std::vector<RegisterId> outputs;  // Kernel output order.
  int64_t period = 1;               // Pieces per firing.
  int64_t firings = 0;
  std::string op_type;
  AttributeMap attributes;
  OpId logical_op = -1;  // -1 for inserted transfers (copy and boxing actors).
  int stage = 0;
  TaskPart part;  // Sources and variables.
  // Set by plan_memory.
  int64_t workspace_bytes = 0;
  int64_t workspace_offset = 0;
  int64_t state_bytes = 0;
  int64_t state_offset = 0;
  // Set by estimate_costs.
  double estimated_seconds = 0;
};

class TaskGraph {
 public:
  // Appends and returns the new id; `task.id` is overwritten.
  TaskId AddTask(TaskDef task);
  // Appends a register produced by `register_def.producer` (which must exist) and lists it
  // among that task's outputs.
  RegisterId AddRegister(TaskRegister register_def);
  // Makes `task` read `register_id` in `phase`, appending it to the task's inputs.
  void AddReader(RegisterId register_id, TaskId task, int phase);
  // Every reader of `from` (a part of `to`'s bytes from byte `offset` on) reads that range of
  // `to` instead, at the same input position and phase and as the type it read (a range view:
  // TaskDef::input_offsets). `from` keeps no reader. No reader of `from` may read `to` already,
  // nor read `from` through a range of its own.
  void MoveReadersToRange(RegisterId from, RegisterId to, int64_t offset);
  // The byte kernel input `k` of task `id` starts at in its register's slot (0 unless a range).
  int64_t InputOffset(TaskId id, size_t k) const;
  // Every reader of `from` reads `to` instead, at the same input position and phase, and still
  // as `from`'s type (a view of `to`'s bytes, TaskDef::input_types). `from` keeps no reader.
  // Both registers must hold as many bytes; no reader of `from` may read `to` already.
  void MoveReaders(RegisterId from, RegisterId to);
  // Task `reader` reads `to` instead of `from`, at the same input position and phase
  // (recompute_activations). Both registers must have the same type; `reader` must read `from`
  // and not `to`.
  void MoveReader(RegisterId from, RegisterId to, TaskId reader);
  // Removes the tasks marked in `removed` (indexed by task id) with the registers they
  // produce, which must have no reader but a removed task; renumbers the rest, keeping their
  // order. O(tasks + registers + readers).
  void RemoveTasks(const std::vector<bool>& removed);
  // The same, and also the registers marked in `removed_registers` (indexed by register id),
  // which must have no reader.
  void RemoveTasks(const std::vector<bool>& removed, const std::vector<bool>& removed_registers);
  // Fusion (fuse_elementwise): task `into` takes over the work of the `absorbed` tasks, which
  // the caller then removes with RemoveTasks. `into` reads `inputs` (registers none of them
  // produces) in phase 0, in that order, as `input_types` (empty: each register's type), and
  // writes `outputs` (registers `into` or an absorbed task produced), in that order; `into`'s
  // kind, device, period and op stay for the caller to set. Every other register they produced
  // must be read only by `into` and the absorbed tasks: it loses its readers and is marked in
  // `*removed_registers` (sized to the register count). In a register `into` now reads, the
  // readers among them become one phase-0 reader `into`, after the register's other phase-0
  // readers: the runtime readies a register's readers in this order, and a single worker runs
  // them in the order they became ready, so `into`'s own readers run right after it and find
  // its outputs in cache, as the readers of the chain's last member did in the unfused plan
  // (docs/DECISIONS.md, "Fused actors are readied last").
  void MergeTasks(TaskId into, const std::vector<TaskId>& absorbed,
                  const std::vector<RegisterId>& inputs, std::vector<TensorType> input_types,
                  const std::vector<RegisterId>& outputs, std::vector<bool>* removed_registers);

  const TaskDef& task(TaskId id) const;
  // Mutable access is for annotations (slots, offsets, costs, attributes); change the structure
  // (tasks, registers, readers) only through AddTask, AddRegister, AddReader, MoveReader(s),
  // MergeTasks and RemoveTasks, which is what structure_version() counts.
  TaskDef& mutable_task(TaskId id);
  const TaskRegister& register_at(RegisterId id) const;
  // Counts as a possible change of the registers' annotations (annotation_version()).
  TaskRegister& mutable_register(RegisterId id);

  const std::vector<TaskDef>& tasks() const { return tasks_; }
  const std::vector<TaskRegister>& registers() const { return registers_; }
  // Access to every task or register at once ends the change log.
  std::vector<TaskDef>& mutable_tasks() {
    EndChangeLog();
    return tasks_;
  }
  std::vector<TaskRegister>& mutable_registers() {
    ++annotation_version_;
    EndChangeLog();
    return registers_;
  }
  bool empty() const { return tasks_.empty(); }

  // Types of a task's kernel inputs (not its ordering inputs) and outputs, in kernel order.
  std::vector<TensorType> InputTypes(TaskId task) const;
  std::vector<TensorType> OutputTypes(TaskId task) const;
  // The same one at a time, without copies (emit_plan walks millions of tasks): how many inputs
  // the kernel reads, and the type it reads input `k` (below that count) as.
  size_t KernelInputCount(TaskId task) const;
  const TensorType& InputType(TaskId task, size_t k) const;

  // The phase in which `task` reads `register_id`. CHECKs that it does.
  int PhaseOf(RegisterId register_id, TaskId task) const;

  // Checks ids, producer/reader symmetry, periods (a task's period divides those of the
  // registers it reads and writes; firings * period == total_pieces) and phases (at most one
  // phase-1 reader per register). Slots are checked only when `slots_planned`. Internal on
  // the first broken invariant, naming the task or register.
  Status Verify(int64_t total_pieces, bool slots_planned) const;

  // Only what annotation passes may change: slots >= 1, one slot under a phase-1 reader, slots
  // large enough for their tensors. O(registers + readers).
  Status VerifyAnnotations() const;

  // Changes with every structural change (AddTask, AddRegister, ...), so a caller can skip
  // re-checking an unchanged structure (Compilation::Verify after every pass).
  int64_t structure_version() const { return structure_version_; }
  // Changes whenever a register may have changed: with every structural change and every
  // mutable access to registers (mutable_register, mutable_registers), so that a caller can skip
  // VerifyAnnotations after a pass that changed no register.
  int64_t annotation_version() const { return structure_version_ + annotation_version_; }

  // Room for this many tasks and registers (expand_physical knows roughly how many).
  void Reserve(size_t tasks, size_t registers);

  // The change log, for a verifier that checks only what changed (Compilation::Verify after
  // order_weight_gradients and insert_send_recv, which touch a few thousand of millions of
  // tasks). StartChangeLog begins it, once the verifier has checked the whole graph. From then
  // on every task and register a change may have touched is logged, with what it was related
  // to before: mutable_task logs the task and its inputs and outputs, mutable_register the
  // register, its producer and its readers, since the caller may rewrite any of them; the
  // structural methods log what they change. A relation that held at the last check and was
  // broken since therefore has an end in the log, and VerifyChanged, which checks the logged
  // tasks and registers (each against everything it now refers to) as Verify checks every one,
  // finds what Verify would. The log ends, incomplete, at a change of everything
  // (mutable_tasks, mutable_registers, RemoveTasks, MergeTasks) or when it grows past the
  // graph's size (plus 4096 entries); the verifier then checks the whole graph again. Passes must
  // change the graph only through these accessors and methods (there is no other non-const access).
  void StartChangeLog() const;
  bool ChangeLogComplete() const { return logging_; }
  Status VerifyChanged(int64_t total_pieces, bool slots_planned) const;

 private:
  // MoveReaders and MoveReadersToRange: every reader of `from` reads `to`, `rebind` setting
  // input k of each (where it read `from`), in the reader's place before any phase-1 reader.
  void TransferReaders(RegisterId from, RegisterId to,
                       const std::function<void(TaskDef&, size_t)>& rebind);
  void LogTask(TaskId id, bool with_relations) const;
  void LogRegister(RegisterId id, bool with_relations) const;
  void EndChangeLog() const;
  bool ChangeLogFull() const;
  std::vector<TaskDef> tasks_;
  std::vector<TaskRegister> registers_;
  int64_t structure_version_ = 0;
  int64_t annotation_version_ = 0;  // Mutable accesses to registers.
  // The change log (bookkeeping for verifiers, hence mutable: StartChangeLog is const).
  mutable bool logging_ = false;
  mutable std::vector<TaskId> changed_tasks_;
  mutable std::vector<RegisterId> changed_registers_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_IR_TASK_GRAPH_H_
