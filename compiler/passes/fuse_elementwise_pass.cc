// fuse_elementwise: chains of element-wise tasks become one `fused` task (docs/OPS.md, "fused";
// docs/PROTOCOL.md, "Fused actors"), one actor that walks memory once where the chain had one
// actor, and one pass over memory, per op.
//
// Contract:
// - What fuses: compute tasks on the compute queue whose op is bias_add, add, add_n, scale,
//   relu, gelu, relu_grad, gelu_grad or cast (proto/fused_program.h), reading and read only in
//   phase 0. A chain grows from a task to a reader of its output on the same device, with the
//   same period and stage and as many elements, while the program stays valid
//   (InferFusedLayout: every other input is read whole or repeated, as a bias or a broadcast
//   operand) and at most kMaxChain long. A chain of one task stays as it was. Tasks that read
//   or write a tensor in another layout than plain (choose_layouts) never fuse.
// - What a fused task reads and writes: every register a member reads that no member
//   produces, once, in first-use order; every member's output that something outside the chain
//   reads (a forward activation the backward pass keeps, the chain's last value), in chain
//   order. Intermediate values read only inside the chain have no register any more.
// - Never a cycle: an intermediate value read outside the chain leaves it, so a task may join
//   only when every other input it reads comes from a task that precedes (by longest path from
//   the plan's first tasks) every member whose value leaves: nothing that reads a member's
//   value can then produce it. The deadlock check still runs on the result.
// - Product epilogues: a chain may also start with a product (matmul, float32 or bfloat16
//   operands, only transpose attributes) on the compute queue that reads and is read in phase
//   0, plain; the chain then grows through its readers as above, and its program starts with
//   the product (proto/fused_program.h), whose kernel runs the chain on each band of c's rows
//   as it is computed. The product's two operands become the fused task's first two inputs
//   (read by no other member); its value keeps a register only when something outside the
//   chain reads it. Products are heads only: the chain finder starts from them before the
//   element-wise tasks of the same level, so a product takes the chain that reads it. Off
//   with CompileOptions::fuse_epilogues = false (`--no-epilogues`), and with fusion.
// - Names: the fused task is named after its members joined by '+' ("fc1_bias+relu1",
//   "fc1+fc1_bias+relu1" with its product), keeps the last member's place, logical op and
//   registers' names, and its program names the ops (the trace labels it "fused: bias_add+relu"
//   or "fused: matmul+bias_add+relu"). Tasks on cuda devices are never fused (no cuda `fused`
//   kernel yet, docs/CUDA.md). Off with CompileOptions::fuse_elementwise = false
//   (`--no-fusion`).
// - Order: in each register it reads, the fused task comes after the other phase-0 readers
//   (TaskGraph::MergeTasks), so it is readied last and its own readers run right after it, as
//   those of the chain's last member did (docs/DECISIONS.md, "Fused actors are readied last").
//
// Runs on the task graph after fold_views and before plan_registers, so the memory passes
// (slots, arena offsets, lifetime-based reuse, in-place ops) plan the fused graph like any other.
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "compiler/passes/passes.h"
#include "proto/fused_program.h"

namespace softwire {
namespace compiler {
namespace {

// Statements of one fused task: the cpu kernel keeps each value in an L1 block of its own.
constexpr size_t kMaxChain = 12;

// Longest path from a task that reads nothing, over register edges: a task that depends on
// another has a larger level.
std::vector<int64_t> Levels(const TaskGraph& tasks) {
  const size_t count = tasks.tasks().size();
  std::vector<int64_t> level(count, 0);
  std::vector<size_t> pending(count, 0);
  std::vector<TaskId> ready;
  for (const TaskDef& task : tasks.tasks()) {
    pending[task.id] = task.inputs.size();
    if (task.inputs.empty()) ready.push_back(task.id);
  }
  while (!ready.empty()) {
    const TaskId task = ready.back();
    ready.pop_back();
    for (RegisterId output : tasks.task(task).outputs) {
      for (const RegisterReader& reader : tasks.register_at(output).readers) {
        level[reader.task] = std::max(level[reader.task], level[task] + 1);
        if (--pending[reader.task] == 0) ready.push_back(reader.task);
      }
    }
  }
  return level;
}

bool Fusible(const TaskGraph& tasks, const TaskDef& task) {
  if (task.kind != proto::ACTOR_KIND_COMPUTE || task.queue != 0 || task.outputs.size() != 1 ||
      !IsFusableOpType(task.op_type)) {
    return false;
  }
  for (RegisterId input : task.inputs) {
    if (tasks.PhaseOf(input, task.id) != 0) return false;
  }
  // The fused kernel walks plain tensors (a bias or broadcast operand repeats along the
  // trailing axes); image batches that choose_layouts laid out stay with their own kernels.
  for (const TensorType& type : tasks.InputTypes(task.id)) {
    if (type.layout != Layout::kPlain) return false;
  }
  for (const TensorType& type : tasks.OutputTypes(task.id)) {
    if (type.layout != Layout::kPlain) return false;
  }
  for (const RegisterReader& reader : tasks.register_at(task.outputs[0]).readers) {
    if (reader.phase != 0) return false;
  }
  return true;
}

// A product that may start a chain: a matmul with two inputs and only transpose attributes, its
// operands float32 or bfloat16, read and read in phase 0 as Fusible asks.
bool FusibleProduct(const TaskGraph& tasks, const TaskDef& task) {
  if (task.kind != proto::ACTOR_KIND_COMPUTE || task.queue != 0 || task.outputs.size() != 1 ||
      task.inputs.size() != 2 || !IsFusableProductOpType(task.op_type)) {
    return false;
  }
  for (const auto& [name, value] : task.attributes.entries()) {
    if (name != "transpose_a" && name != "transpose_b") return false;
  }
  for (RegisterId input : task.inputs) {
    if (tasks.PhaseOf(input, task.id) != 0) return false;
  }
  for (const TensorType& type : tasks.InputTypes(task.id)) {
    if (type.layout != Layout::kPlain ||
        (type.dtype != DType::kFloat32 && type.dtype != DType::kBFloat16)) {
      return false;
    }
  }
  for (const TensorType& type : tasks.OutputTypes(task.id)) {
    if (type.layout != Layout::kPlain) return false;
  }
  for (const RegisterReader& reader : tasks.register_at(task.outputs[0]).readers) {
    if (reader.phase != 0) return false;
  }
  return true;
}

// What a chain becomes: its program and the registers it reads and writes.
struct FusedTask {
  FusedProgram program;
  std::vector<RegisterId> inputs;
  std::vector<TensorType> input_types;  // As the members read them (views included).
  std::vector<RegisterId> outputs;
};

bool InChain(const std::vector<TaskId>& chain, TaskId task) {
  return std::find(chain.begin(), chain.end(), task) != chain.end();
}

// A member's output leaves the chain when something outside it reads it (or nothing does).
bool Leaves(const TaskGraph& tasks, const std::vector<TaskId>& chain, RegisterId output) {
  const std::vector<RegisterReader>& readers = tasks.register_at(output).readers;
  return readers.empty() ||
         std::any_of(readers.begin(), readers.end(),
                     [&](const RegisterReader& reader) { return !InChain(chain, reader.task); });
}

// The chain's program; false when it is not one (InferFusedLayout refuses it, a member reads
// an intermediate value through a view, or one input is read as two types).
bool BuildFusedTask(const TaskGraph& tasks, const std::vector<TaskId>& chain, FusedTask* fused) {
  std::map<RegisterId, int> value_of;  // Register -> statement.
  std::map<RegisterId, int> input_of;  // Register -> kernel input.
  for (size_t index = 0; index < chain.size(); ++index) {
    const TaskDef& member = tasks.task(chain[index]);
    const std::vector<TensorType> types = tasks.InputTypes(member.id);
    FusedStep step;
    if (!FusedOpOf(member.op_type, &step.op)) return false;
    if (step.op == FusedOp::kMatmul) {
      // A product only heads a chain: its operands are inputs x0 and x1, even when they are one
      // register, and no other member may read them (InferFusedLayout refuses it).
      if (index != 0) return false;
      for (size_t k = 0; k < 2; ++k) {
        input_of.emplace(member.inputs[k], static_cast<int>(k));
        fused->inputs.push_back(member.inputs[k]);
        fused->input_types.push_back(types[k]);
        step.operands.push_back({true, static_cast<int>(k)});
      }
      step.transpose_a = member.attributes.GetBool("transpose_a");
      step.transpose_b = member.attributes.GetBool("transpose_b");
      fused->program.steps.push_back(step);
      value_of[member.outputs[0]] = 0;
      continue;
    }
    for (size_t k = 0; k < member.inputs.size(); ++k) {
      const RegisterId input = member.inputs[k];
      auto value = value_of.find(input);
      if (value != value_of.end()) {
        if (types[k] != tasks.register_at(input).type) return false;
        step.operands.push_back({false, value->second});
        continue;
      }
      auto [known, added] = input_of.emplace(input, static_cast<int>(fused->inputs.size()));
      if (added) {
        fused->inputs.push_back(input);
        fused->input_types.push_back(types[k]);
      } else if (fused->input_types[static_cast<size_t>(known->second)] != types[k]) {
        return false;
      }
      step.operands.push_back({true, known->second});
    }
    if (step.op == FusedOp::kScale) step.factor = member.attributes.GetFloat("factor");
    if (step.op == FusedOp::kCast) {
      StatusOr<DType> dtype = ParseDType(member.attributes.GetString("dtype"));
      if (!dtype.ok()) return false;
      step.dtype = *dtype;
    }
    fused->program.steps.push_back(step);
    value_of[member.outputs[0]] = static_cast<int>(index);
  }
  for (size_t index = 0; index < chain.size(); ++index) {
    const RegisterId output = tasks.task(chain[index]).outputs[0];
    if (!Leaves(tasks, chain, output)) continue;
    fused->outputs.push_back(output);
    fused->program.outputs.push_back(static_cast<int>(index));
  }
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const TensorType& type : fused->input_types) {
    shapes.push_back(type.shape);
    dtypes.push_back(type.dtype);
  }
  StatusOr<FusedLayout> layout = InferFusedLayout(fused->program, shapes, dtypes);
  if (!layout.ok()) return false;
  for (size_t k = 0; k < fused->outputs.size(); ++k) {
    const size_t step = static_cast<size_t>(fused->program.outputs[k]);
    const TensorType& type = tasks.register_at(fused->outputs[k]).type;
    if (type.shape != layout->step_shapes[step] || type.dtype != layout->step_dtypes[step]) {
      return false;
    }
  }
  return true;
}

// Grows chains from fusible tasks in order of level (see the file comment).
class ChainFinder {
 public:
  // `fusing_devices[d]`: whether device d has a fused kernel (cuda devices do not yet).
  ChainFinder(const TaskGraph& tasks, bool products, const std::vector<bool>& fusing_devices)
      : tasks_(tasks),
        level_(Levels(tasks)),
        fusible_(tasks.tasks().size(), false),
        product_(tasks.tasks().size(), false),
        taken_(tasks.tasks().size(), false) {
    for (const TaskDef& task : tasks.tasks()) {
      const bool fusing = task.device >= 0 &&
                          task.device < static_cast<int>(fusing_devices.size()) &&
                          fusing_devices[static_cast<size_t>(task.device)];
      fusible_[task.id] = fusing && Fusible(tasks, task);
      product_[task.id] = fusing && products && FusibleProduct(tasks, task);
    }
  }

  std::vector<std::vector<TaskId>> Find() {
    std::vector<TaskId> order;
    for (const TaskDef& task : tasks_.tasks()) {
      if (fusible_[task.id] || product_[task.id]) order.push_back(task.id);
    }
    // By level; at one level products first, so that a product takes the chain reading it.
    std::stable_sort(order.begin(), order.end(), [&](TaskId a, TaskId b) {
      return level_[a] != level_[b] ? level_[a] < level_[b] : product_[a] > product_[b];
    });
    std::vector<std::vector<TaskId>> chains;
    for (TaskId head : order) {
      if (taken_[head]) continue;
      std::vector<TaskId> chain = Grow(head);
      if (chain.size() < 2) continue;
      for (TaskId member : chain) taken_[member] = true;
      chains.push_back(std::move(chain));
    }
    return chains;
  }

 private:
  std::vector<TaskId> Grow(TaskId head) {
    std::vector<TaskId> chain = {head};
    int64_t exit_level = std::numeric_limits<int64_t>::max();
    while (chain.size() < kMaxChain) {
      const TaskDef& last = tasks_.task(chain.back());
      const TaskRegister& value = tasks_.register_at(last.outputs[0]);
      // `last`'s value leaves the chain if anything but the next member reads it.
      const int64_t exit =
          value.readers.size() > 1 ? std::min(exit_level, level_[last.id]) : exit_level;
      TaskId next = -1;
      for (const RegisterReader& reader : value.readers) {
        if (MayJoin(chain, reader.task, exit)) {
          next = reader.task;
          break;
        }
      }
      if (next < 0) break;
      chain.push_back(next);
      FusedTask fused;
      if (!BuildFusedTask(tasks_, chain, &fused)) {
        chain.pop_back();
        break;
      }
      exit_level = exit;
    }
    return chain;
  }

  bool MayJoin(const std::vector<TaskId>& chain, TaskId candidate, int64_t exit) const {
    const TaskDef& head = tasks_.task(chain.front());
    const TaskDef& task = tasks_.task(candidate);
    if (taken_[candidate] || !fusible_[candidate] || InChain(chain, candidate) ||
        task.device != head.device || task.period != head.period || task.stage != head.stage ||
        tasks_.register_at(task.outputs[0]).type.NumElements() !=
            tasks_.register_at(head.outputs[0]).type.NumElements()) {
      return false;
    }
    for (RegisterId input : task.inputs) {
      const TaskId producer = tasks_.register_at(input).producer;
      if (!InChain(chain, producer) && level_[producer] >= exit) return false;
    }
    return true;
  }

  const TaskGraph& tasks_;
  const std::vector<int64_t> level_;
  std::vector<bool> fusible_;  // Element-wise: may head or join a chain.
  std::vector<bool> product_;  // A product: may head a chain only.
  std::vector<bool> taken_;
};

// "fc1_bias+relu1"; a device suffix all members share ("@1") is written once, at the end.
std::string FusedName(const TaskGraph& tasks, const std::vector<TaskId>& chain) {
  const std::string& first = tasks.task(chain.front()).name;
  const size_t at = first.rfind('@');
  std::string suffix = at == std::string::npos ? "" : first.substr(at);
  for (TaskId member : chain) {
    const std::string& name = tasks.task(member).name;
    if (suffix.empty() || name.size() < suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      suffix.clear();
    }
  }
  std::string name;
  for (TaskId member : chain) {
    const std::string& full = tasks.task(member).name;
    name += (name.empty() ? "" : "+") + full.substr(0, full.size() - suffix.size());
  }
  return name + suffix;
}

void Fuse(TaskGraph& tasks, const std::vector<TaskId>& chain, std::vector<bool>* removed,
          std::vector<bool>* removed_registers) {
  FusedTask fused;
  CHECK(BuildFusedTask(tasks, chain, &fused)) << "a chain that grew valid no longer is";
  const std::string name = FusedName(tasks, chain);
  const TaskId into = chain.back();
  std::vector<TaskId> absorbed(chain.begin(), chain.end() - 1);
  bool views = false;
  for (size_t k = 0; k < fused.inputs.size(); ++k) {
    views |= fused.input_types[k] != tasks.register_at(fused.inputs[k]).type;
  }
  if (!views) fused.input_types.clear();
  tasks.MergeTasks(into, absorbed, fused.inputs, fused.input_types, fused.outputs,
                   removed_registers);
  TaskDef& task = tasks.mutable_task(into);
  task.name = name;
  task.op_type = "fused";
  task.attributes = AttributeMap();
  task.attributes.Set("program", FormatFusedProgram(fused.program));
  for (TaskId member : absorbed) (*removed)[member] = true;
}

}  // namespace

Status FuseElementwisePass(Compilation& compilation) {
  if (!compilation.options().fuse_elementwise) return Status::Ok();
  TaskGraph& tasks = compilation.tasks;
  // cuda devices have no `fused` kernel yet (docs/CUDA.md): their chains stay unfused.
  std::vector<bool> fusing_devices(compilation.devices.size(), false);
  for (const TargetDevice& device : compilation.devices) {
    if (device.id >= 0 && device.id < static_cast<int>(fusing_devices.size())) {
      fusing_devices[static_cast<size_t>(device.id)] =
          device.spec.kind() != proto::DEVICE_KIND_CUDA;
    }
  }
  const std::vector<std::vector<TaskId>> chains =
      ChainFinder(tasks, compilation.options().fuse_epilogues, fusing_devices).Find();
  if (chains.empty()) return Status::Ok();
  std::vector<bool> removed(tasks.tasks().size(), false);
  std::vector<bool> removed_registers(tasks.registers().size(), false);
  for (const std::vector<TaskId>& chain : chains) {
    Fuse(tasks, chain, &removed, &removed_registers);
  }
  tasks.RemoveTasks(removed, removed_registers);
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
