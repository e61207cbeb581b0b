// order_weight_gradients: ordering edges that run each weight-gradient product right after its
// data gradient, as PyTorch does, so the activations it reads die as the backward pass goes
// (docs/PROTOCOL.md, "Ordering inputs"; docs/DECISIONS.md, "Ordering edges for weight
// gradients").
//
// Why: registers share bytes only when every firing order the protocol allows keeps them apart
// (plan/register_lifetimes.h). Nothing but its update (or accumulate, or gradient bucket) reads
// a weight gradient, so without an edge one legal order runs every weight-gradient product
// last, and the activations and gradients it reads stay live with the rest of backward.
//
// Contract:
// - A weight-gradient task W: a compute task of the backward pass from which an optimizer
//   update's gradient input is reached through transfers only (copy, boxing, accumulate, send,
//   recv tasks) or through compute tasks that only sum, move or reshape the gradient (add_n
//   summing its terms, a transpose of a weight read transposed, reshape, identity, cast,
//   scale), and whose outputs all go that way (a task that also makes a data gradient, such as
//   layer_norm_grad, is ordered by the data it feeds). Found from every update,
//   so it holds for every layout (dp buckets, tp and pp parts, shard_updates' slices) and for
//   fused tasks (a product epilogue that sums the gradient counts as W).
// - Its siblings: the other backward compute tasks on W's device that read a register W reads
//   and the backward pass produced (the incoming gradient, or its bfloat16 copy): the data-
//   gradient product above all. Its targets: the backward compute tasks on W's device, in W's
//   period, that read an output of a sibling (the next op of the backward pass, e.g. the
//   previous layer's products or relu gradient).
// - Each target T gets W's first output as an ordering input (TaskDef::ordering_inputs: waited
//   for, never read by the kernel), unless T reads it already or T does not come after W in a
//   topological order of the task graph (then T might reach W, and the edge would make a
//   cycle). So W fires, for each piece, before the backward pass goes past its
//   sibling, and what W reads can share bytes with everything after that.
// - Throughput: W and T run on one device's compute queue, which runs one firing at a time, so
//   the edge only fixes an order the queue would pick among ready tasks; the critical path
//   grows by nothing when W is not longer than the rest of backward after its sibling.
// - Numerics: no kernel changes what it computes (the kernel never sees an ordering input).
// - The backward pass after the loss: the loss gradient's seed (autodiff's `fill` of ones)
//   reads nothing, so it and what reads it could fire a whole step ahead, and the loss's
//   producer (which only a sink waits for) could fire last; then the logits and the loss's
//   inputs stay live through the backward pass, and the next step's seed-derived gradient
//   through this one. Each backward compute task reading the seed on its device gets the
//   loss's register there as an ordering input, where the periods allow (not when the seed
//   fires once a step and the loss once a piece) and the task does not reach the loss's
//   producer. These go first; the ranks are then taken again.
//
// Runs on the task graph after fuse_elementwise and fold_weight_casts (targets may be fused
// tasks) and before plan_registers and check_deadlock, which prove the slots with the edges.
// Counts the edges in Compilation::ordering_edges. Off with CompileOptions::ordering_edges =
// false (`--no-ordering-edges`).
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

bool IsTransfer(proto::ActorKind kind) {
  return kind == proto::ACTOR_KIND_COPY || kind == proto::ACTOR_KIND_BOXING ||
         kind == proto::ACTOR_KIND_ACCUMULATE || kind == proto::ACTOR_KIND_SEND ||
         kind == proto::ACTOR_KIND_RECV;
}

// Ops between a weight-gradient product and its update that only sum, move or reshape the
// gradient: the search goes on through them to the product.
bool PassesOn(const std::string& op_type) {
  return op_type == "add_n" || op_type == "transpose" || op_type == "reshape" ||
         op_type == "identity" || op_type == "cast" || op_type == "scale";
}

class GradientOrderer {
 public:
  explicit GradientOrderer(Compilation& compilation)
      : tasks_(compilation.tasks), graph_(compilation.graph), compilation_(compilation) {
    RankTasks();
  }

  // (loss task, target) pairs: each backward compute task that reads an output of the loss
  // gradient's seed (autodiff's `fill` of ones, which reads nothing) on the seed's device,
  // with a compute task there that makes a register of the loss (see the contract).
  std::vector<std::pair<TaskId, TaskId>> SeedReaderEdges() const {
    std::vector<std::pair<TaskId, TaskId>> edges;
    for (const auto& [seed_op, loss] : compilation_.gradient_sums) {
      if (graph_.op(seed_op).type != "fill" || !graph_.op(seed_op).inputs.empty()) continue;
      std::map<int, TaskId> loss_task_on;  // Device -> a compute task whose first output is it.
      for (const TaskRegister& reg : tasks_.registers()) {
        const TaskDef& producer = tasks_.task(reg.producer);
        if (reg.logical_tensor == loss && producer.kind == proto::ACTOR_KIND_COMPUTE &&
            producer.outputs[0] == reg.id) {
          loss_task_on.emplace(reg.device, reg.producer);
        }
      }
      for (const TaskDef& seed : tasks_.tasks()) {
        if (seed.logical_op != seed_op || !seed.inputs.empty()) continue;
        const auto found = loss_task_on.find(seed.device);
        if (found == loss_task_on.end()) continue;
        const TaskId loss_task = found->second;
        for (RegisterId output : seed.outputs) {
          for (const RegisterReader& reader : tasks_.register_at(output).readers) {
            if (IsBackwardCompute(reader.task, seed.device)) {
              edges.emplace_back(loss_task, reader.task);
            }
          }
        }
      }
    }
    return edges;
  }

  // Every weight-gradient task, in id order.
  std::vector<TaskId> WeightGradientTasks() const {
    std::vector<bool> seen(tasks_.tasks().size(), false);
    std::deque<TaskId> queue;
    std::set<TaskId> found;
    for (const TaskDef& task : tasks_.tasks()) {
      if (task.kind != proto::ACTOR_KIND_UPDATE || task.inputs.empty() ||
          (task.op_type != "sgd_update" && task.op_type != "adam_update")) {
        continue;
      }
      const TaskId producer = tasks_.register_at(task.inputs[0]).producer;
      if (!seen[producer]) {
        seen[producer] = true;
        queue.push_back(producer);
      }
    }
    while (!queue.empty()) {
      const TaskDef& task = tasks_.task(queue.front());
      queue.pop_front();
      const bool passes_on = task.kind == proto::ACTOR_KIND_COMPUTE && PassesOn(task.op_type);
      if (task.kind == proto::ACTOR_KIND_COMPUTE && !passes_on) {
        if (RoleOf(task.id) == OpRole::kBackward && OnlyFeedsUpdates(task)) found.insert(task.id);
        continue;
      }
      if (!passes_on && !IsTransfer(task.kind)) continue;
      for (RegisterId input : task.inputs) {
        const TaskId producer = tasks_.register_at(input).producer;
        if (seen[producer]) continue;
        seen[producer] = true;
        queue.push_back(producer);
      }
    }
    return {found.begin(), found.end()};
  }

  // Whether every output of `task` is read only on the way to updates: by transfers, updates
  // and tasks that pass a gradient on (PassesOn). Not so for a task that also makes a data
  // gradient (layer_norm_grad's grad_x beside grad_gamma): the next backward op reads that, so
  // data already orders it.
  bool OnlyFeedsUpdates(const TaskDef& task) const {
    if (task.outputs.empty()) return false;
    for (RegisterId output : task.outputs) {
      for (const RegisterReader& reader : tasks_.register_at(output).readers) {
        const TaskDef& next = tasks_.task(reader.task);
        if (next.kind == proto::ACTOR_KIND_COMPUTE
                ? !PassesOn(next.op_type)
                : !IsTransfer(next.kind) && next.kind != proto::ACTOR_KIND_UPDATE) {
          return false;
        }
      }
    }
    return true;
  }

  // The targets of weight-gradient task `w` (see the contract).
  std::vector<TaskId> Targets(TaskId w) const {
    const TaskDef& weight_gradient = tasks_.task(w);
    std::set<TaskId> targets;
    for (RegisterId input : weight_gradient.inputs) {
      const TaskRegister& read = tasks_.register_at(input);
      if (!IsBackwardCompute(read.producer, weight_gradient.device)) continue;
      for (const RegisterReader& sibling : read.readers) {
        if (sibling.task == w || !IsBackwardCompute(sibling.task, weight_gradient.device)) {
          continue;
        }
        for (RegisterId output : tasks_.task(sibling.task).outputs) {
          for (const RegisterReader& next : tasks_.register_at(output).readers) {
            const TaskDef& target = tasks_.task(next.task);
            if (next.task == w || !IsBackwardCompute(next.task, weight_gradient.device) ||
                target.period != weight_gradient.period) {
              continue;
            }
            targets.insert(next.task);
          }
        }
      }
    }
    return {targets.begin(), targets.end()};
  }

  // Adds `w`'s first output as an ordering input of `target` unless it reads it already or
  // `target` does not come after `w` in the ranks' topological order (a path from `target` to
  // `w` would put it before; one without such a path is rare, and left unordered); true when
  // added.
  // The ranks alone decide: an edge from a lower rank to a higher one closes no cycle, so no
  // search (a search per edge, each over a weight gradient's ancestors, is quadratic).
  bool AddEdge(TaskId w, TaskId target) {
    return RankedBefore(w, target) && AddReaderEdge(w, target);
  }

  // Adds the loss-to-seed-reader edges (SeedReaderEdges), each unless it would close a cycle;
  // returns how many it added. An edge loss -> target closes one only if target is an ancestor
  // of a loss: one backward walk from all the losses marks their ancestors (linear in the
  // graph), and a target outside them takes its edge at once. Adding such edges makes no new
  // ancestor of a loss (any new path would have to leave a target towards a loss, which no
  // target reaches), so the marks stay right. A target inside them (none in the jobs seen) is
  // asked the exact question (Reaches). Searching per edge instead cost a 10,000-op plan on 256
  // devices minutes: every loss's ancestors are most of the graph.
  int64_t AddSeedEdges(const std::vector<std::pair<TaskId, TaskId>>& edges) {
    std::vector<bool> ancestor(tasks_.tasks().size(), false);
    std::deque<TaskId> queue;
    for (const auto& [loss, target] : edges) {
      if (!ancestor[loss]) {
        ancestor[loss] = true;
        queue.push_back(loss);
      }
    }
    while (!queue.empty()) {
      const TaskId id = queue.front();
      queue.pop_front();
      for (RegisterId input : tasks_.task(id).inputs) {
        const TaskId producer = tasks_.register_at(input).producer;
        if (!ancestor[producer]) {
          ancestor[producer] = true;
          queue.push_back(producer);
        }
      }
    }
    int64_t added = 0;
    for (const auto& [loss, target] : edges) {
      const bool acyclic = !ancestor[target] || !Reaches(target, loss);
      if (acyclic && AddReaderEdge(loss, target)) ++added;
    }
    return added;
  }

  // Each task's position in one topological order of the task graph (Kahn's, ready tasks in
  // id order): an edge from a lower rank to a higher one keeps the order topological, so it
  // can close no cycle, and the ranks stay valid as edges are added.
  void RankTasks() {
    const size_t count = tasks_.tasks().size();
    std::vector<int64_t> waiting(count, 0);
    for (const TaskDef& task : tasks_.tasks()) waiting[task.id] = task.inputs.size();
    std::deque<TaskId> ready;
    for (const TaskDef& task : tasks_.tasks()) {
      if (waiting[task.id] == 0) ready.push_back(task.id);
    }
    rank_.assign(count, static_cast<int64_t>(count));  // Unsorted (on a cycle): never ordered.
    int64_t next = 0;
    while (!ready.empty()) {
      const TaskId id = ready.front();
      ready.pop_front();
      rank_[id] = next++;
      for (RegisterId output : tasks_.task(id).outputs) {
        for (const RegisterReader& reader : tasks_.register_at(output).readers) {
          if (--waiting[reader.task] == 0) ready.push_back(reader.task);
        }
      }
    }
  }

 private:
  // Whether a path of registers leads from task `from` to task `to` (or they are one task).
  // Searches `to`'s ancestors, which for a loss are its forward pass: no more than that.
  bool Reaches(TaskId from, TaskId to) const {
    std::vector<bool> seen(tasks_.tasks().size(), false);
    std::deque<TaskId> queue = {to};
    seen[to] = true;
    while (!queue.empty()) {
      const TaskId id = queue.front();
      queue.pop_front();
      if (id == from) return true;
      for (RegisterId input : tasks_.task(id).inputs) {
        const TaskId producer = tasks_.register_at(input).producer;
        if (!seen[producer]) {
          seen[producer] = true;
          queue.push_back(producer);
        }
      }
    }
    return false;
  }

  bool AddReaderEdge(TaskId w, TaskId target) {
    const RegisterId value = tasks_.task(w).outputs[0];
    const TaskRegister& reg = tasks_.register_at(value);
    for (const RegisterReader& reader : reg.readers) {
      if (reader.task == target) return false;
    }
    if (reg.period % tasks_.task(target).period != 0) return false;
    tasks_.AddReader(value, target, 0);
    TaskDef& task = tasks_.mutable_task(target);
    ++task.ordering_inputs;
    if (!task.input_types.empty()) task.input_types.push_back(reg.type);
    return true;
  }

  OpRole RoleOf(TaskId id) const {
    const TaskDef& task = tasks_.task(id);
    return task.logical_op < 0 ? OpRole::kUnknown : graph_.op(task.logical_op).placement.role;
  }

  bool IsBackwardCompute(TaskId id, int device) const {
    const TaskDef& task = tasks_.task(id);
    return task.kind == proto::ACTOR_KIND_COMPUTE && task.device == device &&
           RoleOf(id) == OpRole::kBackward;
  }

  // True when an edge from `from` to `to` keeps the ranks topological.
  bool RankedBefore(TaskId from, TaskId to) const {
    return rank_[from] < rank_[to] && rank_[to] < static_cast<int64_t>(rank_.size());
  }

  TaskGraph& tasks_;
  const LogicalGraph& graph_;
  const Compilation& compilation_;
  std::vector<int64_t> rank_;
};

}  // namespace

Status OrderWeightGradientsPass(Compilation& compilation) {
  compilation.ordering_edges = 0;
  if (!compilation.options().ordering_edges || !compilation.schedule.training) {
    return Status::Ok();
  }
  GradientOrderer orderer(compilation);
  compilation.ordering_edges += orderer.AddSeedEdges(orderer.SeedReaderEdges());
  orderer.RankTasks();
  for (TaskId w : orderer.WeightGradientTasks()) {
    for (TaskId target : orderer.Targets(w)) {
      if (orderer.AddEdge(w, target)) ++compilation.ordering_edges;
    }
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
