// partition_stages: every op's role in the training loop and its pipeline stage
// (docs/PARALLELISM.md, "Placement").
//
// The job's forward ops, in a topological order that puts pinned stages in order, are cut into
// pipeline_stages contiguous groups by placement::PartitionStages: each position costs its op's
// forward and backward work (plus the update of each variable it reads first), divided over
// the stage's dp * tp devices; a boundary costs the transfer of every value that crosses it,
// forward and (for training) back. Everything else follows:
//   sources and variables   the stage of their first reader
//   backward ops            the stage of the forward op they differentiate; a gradient sum or
//                           the loss seed, the stage of the tensor it is the gradient of
//   update, accumulate      the stage of their variable
//   sinks                   the stage of the value they report
// A forward op pinned to an earlier stage than one it depends on would make the pipeline flow
// backwards (a cross-stage cycle); that is rejected naming both ops.
#include <algorithm>
#include <map>

#include "compiler/passes/passes.h"
#include "compiler/physical/op_cost.h"
#include "placement/stage_partition.h"

namespace softwire {
namespace compiler {
namespace {

OpRole RoleByOrigin(const Compilation& compilation, const LogicalOp& op) {
  if (op.type == "sink") return OpRole::kSink;
  if (op.id < compilation.job_ops_end) {
    if (op.type == "source") return OpRole::kSource;
    if (op.type == "variable") return OpRole::kVariable;
    return OpRole::kForward;
  }
  if (op.id >= compilation.backward_ops_begin && op.id < compilation.backward_ops_end) {
    return OpRole::kBackward;
  }
  const OpDefinition& definition = *compilation.registry().Find(op.type);
  if (definition.actor_kind == proto::ACTOR_KIND_UPDATE ||
      definition.actor_kind == proto::ACTOR_KIND_ACCUMULATE) {
    return OpRole::kOptimizer;
  }
  return OpRole::kUnknown;  // Helpers made later (identity copies) take their reader's role.
}

// The first op (in `order`) that reads one of `op`'s outputs; -1 when none does.
OpId FirstReader(const LogicalGraph& graph, const std::vector<int>& position, const LogicalOp& op) {
  OpId first = -1;
  for (TensorId output : op.outputs) {
    for (const TensorUse& use : graph.tensor(output).consumers) {
      if (first < 0 || position[use.op] < position[first]) first = use.op;
    }
  }
  return first;
}

class StagePartitioner {
 public:
  explicit StagePartitioner(Compilation& compilation)
      : compilation_(compilation), graph_(compilation.graph), cost_(*compilation.cluster) {}

  Status Run() {
    SOFTWIRE_ASSIGN_OR_RETURN(order_, graph_.TopologicalOrder());
    position_.assign(graph_.op_count(), 0);
    for (size_t i = 0; i < order_.size(); ++i) position_[order_[i]] = static_cast<int>(i);
    AssignRoles();
    SOFTWIRE_RETURN_IF_ERROR(StageForwardOps());
    StageTheRest();
    compilation_.staged = true;
    return Status::Ok();
  }

 private:
  LogicalOp& op(OpId id) { return graph_.mutable_op(id); }

  void AssignRoles() {
    for (OpId id = 0; id < graph_.op_count(); ++id) {
      op(id).placement.role = RoleByOrigin(compilation_, graph_.op(id));
    }
    // Helpers read by ops made earlier: reverse topological order sees the reader first.
    for (auto id = order_.rbegin(); id != order_.rend(); ++id) {
      if (graph_.op(*id).placement.role != OpRole::kUnknown) continue;
      OpId reader = FirstReader(graph_, position_, graph_.op(*id));
      op(*id).placement.role = reader >= 0 ? graph_.op(reader).placement.role : OpRole::kForward;
    }
  }

  // The forward ops in a topological order sorted by the earliest stage each may take (its pin,
  // or the latest pin among the forward ops it depends on). Fails when a pin is out of range
  // or earlier than a pin it depends on.
  Status OrderForwardOps(std::vector<OpId>* forward, std::vector<int>* pins) {
    const int stages = compilation_.parallel.pipeline;
    std::vector<int> earliest(graph_.op_count(), 0);
    std::vector<OpId> cause(graph_.op_count(), -1);  // The pinned op that set `earliest`.
    for (OpId id : order_) {
      const LogicalOp& current = graph_.op(id);
      if (current.placement.role != OpRole::kForward) continue;
      for (TensorId input : current.inputs) {
        OpId producer = graph_.tensor(input).producer;
        if (earliest[producer] > earliest[id]) {
          earliest[id] = earliest[producer];
          cause[id] = cause[producer];
        }
      }
      if (!current.stage.has_value()) continue;
      const int pin = *current.stage;
      if (pin >= stages) {
        return compilation_.OpError(id, "stage " + std::to_string(pin) +
                                            " is not below pipeline_stages " +
                                            std::to_string(stages));
      }
      if (pin < earliest[id]) {
        const LogicalOp& other = graph_.op(cause[id]);
        return compilation_.OpError(
            id, "pinned to stage " + std::to_string(pin) + " but it depends on op '" + other.name +
                    "' pinned to stage " + std::to_string(*other.stage) +
                    "; stages must follow the data flow, or the pipeline would run in a cycle "
                    "between stages");
      }
      earliest[id] = pin;
      cause[id] = id;
    }
    for (OpId id : order_) {
      if (graph_.op(id).placement.role == OpRole::kForward) forward->push_back(id);
    }
    std::stable_sort(forward->begin(), forward->end(),
                     [&](OpId a, OpId b) { return earliest[a] < earliest[b]; });
    for (OpId id : *forward) pins->push_back(graph_.op(id).stage.value_or(-1));
    return Status::Ok();
  }

  double Seconds(const LogicalOp& current) {
    const OpDefinition& definition = *compilation_.registry().Find(current.type);
    std::vector<TensorType> inputs;
    std::vector<TensorType> outputs;
    for (TensorId input : current.inputs) inputs.push_back(graph_.tensor(input).type);
    for (TensorId output : current.outputs) outputs.push_back(graph_.tensor(output).type);
    return OpSeconds(definition, inputs, outputs, current.attributes, cost_, 0) /
           static_cast<double>(current.period);
  }

  // Work per piece of each forward position: the op, its backward ops, and the updates of the
  // variables it reads first.
  std::vector<double> PositionSeconds(const std::vector<OpId>& forward) {
    std::vector<int> slot(graph_.op_count(), -1);
    for (size_t i = 0; i < forward.size(); ++i) slot[forward[i]] = static_cast<int>(i);
    std::vector<double> seconds(forward.size(), 0);
    for (OpId id : order_) {
      const LogicalOp& current = graph_.op(id);
      int at = -1;
      if (current.placement.role == OpRole::kForward) {
        at = slot[id];
      } else if (!current.gradient_of.empty()) {
        std::optional<OpId> forward_op = graph_.FindOp(current.gradient_of);
        if (forward_op.has_value()) at = slot[*forward_op];
      } else if (current.placement.role == OpRole::kOptimizer) {
        const LogicalOp& variable = graph_.op(graph_.tensor(current.inputs.back()).producer);
        OpId reader = FirstReader(graph_, position_, variable);
        if (reader >= 0) at = slot[reader];
      }
      if (at >= 0) seconds[at] += Seconds(current);
    }
    const double devices = compilation_.parallel.data * compilation_.parallel.tensor;
    for (double& value : seconds) value /= devices;
    return seconds;
  }

  // Transfer seconds of a boundary in front of each position: every value produced before it
  // and read at or after it, once per piece (per-step values spread over the step), and back
  // again as a gradient when training.
  std::vector<double> CutSeconds(const std::vector<OpId>& forward) {
    const int n = static_cast<int>(forward.size());
    std::vector<int> slot(graph_.op_count(), -1);
    for (int i = 0; i < n; ++i) slot[forward[i]] = i;
    std::vector<double> bytes(n + 1, 0);
    std::vector<double> messages(n + 1, 0);
    const double devices = compilation_.parallel.data * compilation_.parallel.tensor;
    for (const LogicalTensor& tensor : graph_.tensors()) {
      int first = n;
      int last = -1;
      for (const TensorUse& use : tensor.consumers) {
        if (slot[use.op] < 0) continue;
        first = std::min(first, slot[use.op]);
        last = std::max(last, slot[use.op]);
      }
      int from = slot[tensor.producer];
      if (from < 0) from = first;  // Sources and variables sit with their first reader.
      if (last <= from) continue;
      double size = static_cast<double>(tensor.type.NumBytes()) /
                    static_cast<double>(tensor.period) / devices;
      if (compilation_.schedule.training && tensor.type.dtype == DType::kFloat32) size *= 2;
      bytes[from + 1] += size;
      bytes[last + 1] -= size;
      messages[from + 1] += 1;
      messages[last + 1] -= 1;
    }
    std::vector<double> cut(n + 1, 0);
    const int per_stage = compilation_.parallel.data * compilation_.parallel.tensor;
    const placement::LinkFigures& link = compilation_.cluster->Link(0, per_stage);
    double running_bytes = 0;
    double running_messages = 0;
    for (int j = 1; j < n; ++j) {
      running_bytes += bytes[j];
      running_messages += messages[j];
      cut[j] = running_messages * link.latency + running_bytes / link.bandwidth;
    }
    return cut;
  }

  Status StageForwardOps() {
    std::vector<OpId> forward;
    std::vector<int> pins;
    SOFTWIRE_RETURN_IF_ERROR(OrderForwardOps(&forward, &pins));
    StageReport& report = compilation_.stage_report;
    const int stages = compilation_.parallel.pipeline;
    report.stage_seconds.assign(stages, 0);
    report.forward_ops.assign(stages, 0);
    placement::StagePartitionInput input;
    input.op_seconds = PositionSeconds(forward);
    input.cut_seconds =
        stages > 1 ? CutSeconds(forward) : std::vector<double>(forward.size() + 1, 0);
    input.pinned = pins;
    input.stages = stages;
    SOFTWIRE_ASSIGN_OR_RETURN(placement::StagePartition partition,
                              placement::PartitionStages(input));
    for (size_t i = 0; i < forward.size(); ++i) {
      op(forward[i]).placement.stage = partition.stage_of[i];
      ++report.forward_ops[partition.stage_of[i]];
    }
    report.stage_seconds = partition.stage_seconds;
    report.bottleneck_seconds = partition.bottleneck_seconds;
    return Status::Ok();
  }

  int StageOfProducer(TensorId tensor) {
    return graph_.op(graph_.tensor(tensor).producer).placement.stage;
  }

  // The stage an op that is not forward takes, or -1 while what it follows is unstaged.
  int FollowedStage(const LogicalOp& current) {
    switch (current.placement.role) {
      case OpRole::kSource:
      case OpRole::kVariable: {
        OpId reader = FirstReader(graph_, position_, current);
        return reader < 0 ? 0 : graph_.op(reader).placement.stage;
      }
      case OpRole::kSink:
        return StageOfProducer(current.inputs[0]);
      case OpRole::kBackward: {
        if (!current.gradient_of.empty()) {
          std::optional<OpId> forward_op = graph_.FindOp(current.gradient_of);
          if (forward_op.has_value()) return graph_.op(*forward_op).placement.stage;
        }
        auto target = compilation_.gradient_sums.find(current.id);
        if (target != compilation_.gradient_sums.end()) return StageOfProducer(target->second);
        break;
      }
      case OpRole::kOptimizer:
        if (compilation_.registry().Find(current.type)->actor_kind == proto::ACTOR_KIND_UPDATE) {
          return StageOfProducer(current.inputs[1]);
        }
        break;
      default:
        break;
    }
    OpId reader = FirstReader(graph_, position_, current);
    if (reader >= 0 && graph_.op(reader).placement.stage >= 0) {
      return graph_.op(reader).placement.stage;
    }
    return current.inputs.empty() ? 0 : StageOfProducer(current.inputs[0]);
  }

  // Sources and variables first (their readers are forward), then backward ops in topological
  // order, then updates, then whatever follows a reader (accumulates, helpers).
  void StageTheRest() {
    const OpRole passes[] = {OpRole::kSource,    OpRole::kVariable, OpRole::kBackward,
                             OpRole::kOptimizer, OpRole::kSink,     OpRole::kForward};
    for (OpRole role : passes) {
      for (OpId id : order_) {
        LogicalOp& current = op(id);
        if (current.placement.role != role || current.placement.stage >= 0) continue;
        if (role == OpRole::kOptimizer &&
            compilation_.registry().Find(current.type)->actor_kind != proto::ACTOR_KIND_UPDATE) {
          continue;
        }
        current.placement.stage = FollowedStage(current);
      }
    }
    // What follows only unstaged ops (a variable that only a sink reads: the sink follows the
    // variable and the variable its reader) takes the first stage.
    for (auto id = order_.rbegin(); id != order_.rend(); ++id) {
      if (graph_.op(*id).placement.stage >= 0) continue;
      op(*id).placement.stage = std::max(FollowedStage(op(*id)), 0);
    }
    for (OpId id : order_) CHECK_GE(graph_.op(id).placement.stage, 0) << graph_.op(id).name;
  }

  Compilation& compilation_;
  LogicalGraph& graph_;
  placement::CostModel cost_;
  std::vector<OpId> order_;
  std::vector<int> position_;
};

}  // namespace

Status PartitionStagesPass(Compilation& compilation) {
  return StagePartitioner(compilation).Run();
}

}  // namespace compiler
}  // namespace softwire
