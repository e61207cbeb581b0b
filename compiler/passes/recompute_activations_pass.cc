// recompute_activations: budget measure 2 (docs/PARALLELISM.md, "A memory budget the compiler
// meets"): activation checkpointing for cheap element-wise ops, as the memory budget driver
// (compiler/memory_budget.h) asks for it.
//
// A candidate is a per-piece compute task of the forward pass (relu, gelu, bias_add, add or
// scale; plain float32) whose output the backward pass reads (so it is kept from forward to
// backward) and whose every input the backward pass keeps anyway (read by a backward task) or
// holds all step (a variable, a per-step value). Applied, a `fused` clone of the op (docs/OPS.md
// "fused": `t0 = gelu(x0); y0 = t0; after x1`) reads the same inputs and, as an ordering input,
// a gradient that a backward reader of the output reads, whose producer depends on no backward
// reader of the output; every backward reader then reads the clone's value. The output is no
// longer kept (only forward tasks read it), and the ordering input makes the recomputed value
// live only from just before its first backward reader (plan/register_lifetimes.h derives lives
// from the dependencies, so without it the clone could run during the forward pass and save
// nothing). The clone takes that backward reader's logical op and stage.
//
// Candidates rank by bytes saved (slots x bytes of the output, as plan_registers will plan
// them) per second of recompute (the cost model's OpSeconds), most first; the first
// budget.choices.recompute_limit (at least CompileOptions::recompute; -1: all) are applied,
// skipping one whose input an earlier one dropped
// (reading it would keep it again). Runs before fuse_elementwise, which then fuses the
// forward and backward chains around the clones as usual.
#include <algorithm>
#include <deque>
#include <set>

#include "compiler/passes/passes.h"
#include "compiler/physical/op_cost.h"
#include "proto/fused_program.h"

namespace softwire {
namespace compiler {
namespace {

struct Candidate {
  TaskId task = -1;
  RegisterId value = -1;
  RegisterId trigger = -1;
  TaskId trigger_reader = -1;
  int64_t bytes = 0;
  double seconds = 0;
};

bool IsRecomputable(const std::string& op_type) {
  return op_type == "relu" || op_type == "gelu" || op_type == "bias_add" || op_type == "add" ||
         op_type == "scale";
}

class Recomputer {
 public:
  explicit Recomputer(Compilation& compilation)
      : compilation_(compilation), tasks_(compilation.tasks), graph_(compilation.graph) {}

  std::vector<Candidate> Candidates() const {
    std::vector<Candidate> found;
    for (const TaskDef& task : tasks_.tasks()) {
      Candidate candidate;
      if (Find(task, &candidate)) found.push_back(candidate);
    }
    std::stable_sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
      return static_cast<double>(a.bytes) * b.seconds > static_cast<double>(b.bytes) * a.seconds;
    });
    return found;
  }

  // Applies `candidate` unless an input was dropped by an earlier one; true when applied.
  bool Apply(const Candidate& candidate) {
    const TaskDef task = tasks_.task(candidate.task);
    for (RegisterId input : task.inputs) {
      if (dropped_.count(input) != 0) return false;
    }
    const TaskRegister value = tasks_.register_at(candidate.value);
    const TaskDef& trigger_reader = tasks_.task(candidate.trigger_reader);
    FusedProgram program;
    FusedStep step;
    CHECK(FusedOpOf(task.op_type, &step.op)) << task.op_type;
    for (size_t k = 0; k < task.inputs.size(); ++k) {
      step.operands.push_back({true, static_cast<int>(k)});
    }
    if (step.op == FusedOp::kScale) step.factor = task.attributes.GetFloat("factor");
    program.steps.push_back(step);
    program.outputs.push_back(0);
    program.after_input = static_cast<int>(task.inputs.size());

    TaskDef clone;
    clone.name = task.name + ".recompute";
    clone.kind = proto::ACTOR_KIND_COMPUTE;
    clone.device = task.device;
    clone.period = task.period;
    clone.firings = task.firings;
    clone.op_type = "fused";
    clone.attributes.Set("program", FormatFusedProgram(program));
    clone.logical_op = trigger_reader.logical_op;
    clone.stage = trigger_reader.stage;
    std::vector<TensorType> input_types = tasks_.InputTypes(task.id);
    input_types.push_back(tasks_.register_at(candidate.trigger).type);
    const TaskId id = tasks_.AddTask(clone);
    for (RegisterId input : task.inputs) tasks_.AddReader(input, id, 0);
    tasks_.AddReader(candidate.trigger, id, 0);
    tasks_.mutable_task(id).input_types = input_types;

    TaskRegister output;
    output.name = value.name + ".recomputed";
    output.producer = id;
    output.device = value.device;
    output.type = value.type;
    output.period = value.period;
    const RegisterId recomputed = tasks_.AddRegister(output);
    for (TaskId reader : BackwardReaders(value)) {
      tasks_.MoveReader(candidate.value, recomputed, reader);
    }
    dropped_.insert(candidate.value);
    return true;
  }

 private:
  OpRole RoleOf(TaskId id) const {
    const TaskDef& task = tasks_.task(id);
    return task.logical_op < 0 ? OpRole::kUnknown : graph_.op(task.logical_op).placement.role;
  }

  std::vector<TaskId> BackwardReaders(const TaskRegister& reg) const {
    std::vector<TaskId> readers;
    for (const RegisterReader& reader : reg.readers) {
      if (RoleOf(reader.task) == OpRole::kBackward) readers.push_back(reader.task);
    }
    return readers;
  }

  // Kept anyway: held all step, or read by the backward pass.
  bool KeptAnyway(RegisterId id) const {
    const TaskRegister& reg = tasks_.register_at(id);
    if (reg.period > 1 || tasks_.task(reg.producer).kind == proto::ACTOR_KIND_VARIABLE) {
      return true;
    }
    return !BackwardReaders(reg).empty();
  }

  // Every task reachable from `from` (them included) through registers.
  std::vector<bool> Descendants(const std::vector<TaskId>& from) const {
    std::vector<bool> seen(tasks_.tasks().size(), false);
    std::deque<TaskId> queue(from.begin(), from.end());
    for (TaskId id : from) seen[id] = true;
    while (!queue.empty()) {
      const TaskId id = queue.front();
      queue.pop_front();
      for (RegisterId output : tasks_.task(id).outputs) {
        for (const RegisterReader& reader : tasks_.register_at(output).readers) {
          if (seen[reader.task]) continue;
          seen[reader.task] = true;
          queue.push_back(reader.task);
        }
      }
    }
    return seen;
  }

  bool Find(const TaskDef& task, Candidate* candidate) const {
    if (task.kind != proto::ACTOR_KIND_COMPUTE || task.outputs.size() != 1 || task.period != 1 ||
        !IsRecomputable(task.op_type) || RoleOf(task.id) != OpRole::kForward) {
      return false;
    }
    const TaskRegister& value = tasks_.register_at(task.outputs[0]);
    for (const TensorType& type : tasks_.InputTypes(task.id)) {
      if (type.dtype != DType::kFloat32 || type.layout != Layout::kPlain) return false;
    }
    if (value.type.dtype != DType::kFloat32 || value.type.layout != Layout::kPlain) return false;
    std::vector<TaskId> backward;
    for (const RegisterReader& reader : value.readers) {
      const OpRole role = RoleOf(reader.task);
      if (reader.phase != 0 || (role != OpRole::kForward && role != OpRole::kBackward)) {
        return false;  // A transfer or an in-place writer: leave it.
      }
      if (role == OpRole::kBackward) backward.push_back(reader.task);
    }
    if (backward.empty()) return false;
    for (RegisterId input : task.inputs) {
      if (tasks_.PhaseOf(input, task.id) != 0 || !KeptAnyway(input)) return false;
    }
    std::sort(backward.begin(), backward.end());
    const std::vector<bool> after_readers = Descendants(backward);
    for (TaskId reader : backward) {
      for (RegisterId input : tasks_.task(reader).inputs) {
        const TaskRegister& gradient = tasks_.register_at(input);
        if (input == value.id || gradient.device != task.device || gradient.period != 1 ||
            RoleOf(gradient.producer) != OpRole::kBackward || after_readers[gradient.producer]) {
          continue;
        }
        candidate->task = task.id;
        candidate->value = value.id;
        candidate->trigger = input;
        candidate->trigger_reader = reader;
        const int64_t in_flight = std::min<int64_t>(compilation_.parallel.pipeline - task.stage,
                                                    compilation_.schedule.pieces_per_step);
        candidate->bytes = std::max<int64_t>(1, in_flight) * value.type.NumBytes();
        const placement::CostModel cost(*compilation_.cluster);
        candidate->seconds =
            OpSeconds(*compilation_.registry().Find(task.op_type), tasks_.InputTypes(task.id),
                      tasks_.OutputTypes(task.id), task.attributes, cost, task.device);
        return true;
      }
    }
    return false;
  }

  Compilation& compilation_;
  TaskGraph& tasks_;
  const LogicalGraph& graph_;
  std::set<RegisterId> dropped_;
};

}  // namespace

Status RecomputeActivationsPass(Compilation& compilation) {
  BudgetReport& report = compilation.budget;
  report.recompute_candidates = 0;
  report.recomputed.clear();
  if (!compilation.schedule.training) return Status::Ok();
  bool budgeted = compilation.options().recompute != 0;
  for (const TargetDevice& device : compilation.devices) budgeted |= device.spec.memory_bytes() > 0;
  if (!budgeted) return Status::Ok();
  Recomputer recomputer(compilation);
  const std::vector<Candidate> candidates = recomputer.Candidates();
  report.recompute_candidates = static_cast<int>(candidates.size());
  const int forced = compilation.options().recompute;
  const size_t limit =
      forced < 0 ? candidates.size()
                 : static_cast<size_t>(std::max({0, forced, report.choices.recompute_limit}));
  for (size_t i = 0; i < candidates.size() && i < limit; ++i) {
    const Candidate& candidate = candidates[i];
    const std::string name = compilation.tasks.register_at(candidate.value).name;
    if (!recomputer.Apply(candidate)) continue;
    report.recomputed.push_back(
        {name, compilation.tasks.task(candidate.task).device, candidate.bytes, candidate.seconds});
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
