// expand_physical: the task graph. In topological order, every op becomes one task per device
// of its mesh, reading and writing its local part of each tensor (docs/PARALLELISM.md,
// "Sbp"): attributes that spell logical shapes or counts are rewritten for the part
// (OpDefinition::localize), sources read their slice of each micro-batch and variables hold
// their slice of the value. Where an op reads a tensor laid out differently, the boxing edge's
// copy and boxing tasks come first (physical/boxing_builder.h), built once per edge. Update
// ops read their variable in phase 1.
//
// Names: an op on one device keeps its name ("fc1", "loss.sink"); on a mesh each task adds its
// device ("fc1@2"), and so do its registers.
#include <map>

#include "compiler/passes/passes.h"
#include "compiler/physical/boxing_builder.h"
#include "compiler/physical/op_cost.h"

namespace softwire {
namespace compiler {
namespace {

class PhysicalExpander {
 public:
  explicit PhysicalExpander(Compilation& compilation)
      : compilation_(compilation),
        graph_(compilation.graph),
        tasks_(compilation.tasks),
        boxing_(compilation, compilation.tasks) {}

  Status Run() {
    SOFTWIRE_ASSIGN_OR_RETURN(std::vector<OpId> order, graph_.TopologicalOrder());
    parts_.assign(graph_.tensor_count(), {});
    built_.assign(compilation_.boxing.size(), {});
    edges_of_tensor_.assign(graph_.tensor_count(), 0);
    // A rough count (ops on their meshes, a handful of actors per edge and device) saves the
    // task graph most of its regrowing.
    size_t estimate = 0;
    for (OpId id : order) estimate += compilation_.meshes[graph_.op(id).placement.mesh].size();
    for (const BoxingEdge& edge : compilation_.boxing) {
      estimate += 4 * compilation_.meshes[edge.to_mesh].size();
    }
    tasks_.Reserve(estimate, estimate + estimate / 4);
    // Updates that read a gradient bucket come last, once every bucket's gradients exist.
    std::vector<OpId> deferred;
    for (OpId id : order) {
      if (ReadsABucket(id)) {
        deferred.push_back(id);
      } else {
        Expand(graph_.op(id));
      }
    }
    for (size_t b = 0; b < compilation_.gradient_buckets.size(); ++b) BuildBucket(b);
    for (OpId id : deferred) Expand(graph_.op(id));
    return Status::Ok();
  }

 private:
  bool ReadsABucket(OpId id) const {
    for (int edge : compilation_.input_boxing[id]) {
      if (edge >= 0 && compilation_.boxing[edge].bucket >= 0) return true;
    }
    return false;
  }

  void BuildBucket(size_t index) {
    const GradientBucket& bucket = compilation_.gradient_buckets[index];
    std::vector<const std::vector<RegisterId>*> sources;
    for (int edge : bucket.edges) sources.push_back(&parts_[compilation_.boxing[edge].tensor]);
    std::vector<std::vector<RegisterId>> results =
        boxing_.BuildBucket(bucket, sources, "gradient_bucket" + std::to_string(index));
    for (size_t i = 0; i < bucket.edges.size(); ++i)
      built_[bucket.edges[i]] = std::move(results[i]);
  }

  // The registers op `op` reads at input `index`, one per position of its mesh.
  const std::vector<RegisterId>& InputParts(const LogicalOp& op, int index) {
    const TensorId tensor = op.inputs[index];
    const int edge = compilation_.input_boxing[op.id][index];
    if (edge < 0) return parts_[tensor];
    if (built_[edge].empty()) {
      const int count = ++edges_of_tensor_[tensor];
      std::string name = graph_.tensor(tensor).name;
      if (count > 1) name += ".to" + std::to_string(count);
      built_[edge] = boxing_.Build(compilation_.boxing[edge], parts_[tensor], name);
    }
    return built_[edge];
  }

  static std::string NameAt(const std::string& name, const placement::DeviceMesh& mesh,
                            int device) {
    return mesh.size() == 1 ? name : name + "@" + std::to_string(device);
  }

  // The attributes of position `at`'s instance: the op's, localized when its parts differ from
  // the logical tensors.
  AttributeMap LocalAttributes(const LogicalOp& op, const OpDefinition& definition,
                               const placement::DeviceMesh& mesh, int at,
                               const std::vector<TensorType>& local_inputs,
                               const std::vector<TensorType>& local_outputs) {
    std::vector<TensorType> logical_inputs;
    std::vector<TensorType> logical_outputs;
    for (TensorId input : op.inputs) logical_inputs.push_back(graph_.tensor(input).type);
    for (TensorId output : op.outputs) logical_outputs.push_back(graph_.tensor(output).type);
    AttributeMap attributes = op.attributes;
    if (!definition.localize ||
        (logical_inputs == local_inputs && logical_outputs == local_outputs)) {
      return attributes;
    }
    const placement::MeshCoordinate coordinate = mesh.Coordinate(at);
    std::vector<placement::TensorBox> input_boxes;
    std::vector<placement::TensorBox> output_boxes;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      input_boxes.push_back(placement::PartBox(logical_inputs[i].shape.dims(),
                                               op.placement.inputs[i], mesh.shape, coordinate));
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      output_boxes.push_back(placement::PartBox(logical_outputs[i].shape.dims(),
                                                op.placement.outputs[i], mesh.shape, coordinate));
    }
    PhysicalContext context{logical_inputs, logical_outputs, local_inputs, local_outputs,
                            input_boxes,    output_boxes,    attributes};
    definition.localize(context);
    return attributes;
  }

  // Sources hold samples of axis 0; variables a slice of at most one axis.
  TaskPart PartOf(const LogicalOp& op, const placement::DeviceMesh& mesh, int at) {
    TaskPart part;
    if (op.type != "source" && op.type != "variable") return part;
    const LogicalTensor& first = graph_.tensor(op.outputs[0]);
    const placement::NdSbp& sbp = op.placement.outputs[0];
    placement::TensorBox box =
        placement::PartBox(first.type.shape.dims(), sbp, mesh.shape, mesh.Coordinate(at));
    std::vector<int> axes = placement::SplitAxes(sbp);
    if (op.type == "source") {
      part.split_axis = 0;
      part.begin = box.begin[0];
      part.end = box.end[0];
    } else if (!axes.empty()) {
      CHECK_EQ(axes.size(), 1u) << "variable '" << op.name << "' split on two axes";
      part.split_axis = axes[0];
      part.begin = box.begin[axes[0]];
      part.end = box.end[axes[0]];
    }
    return part;
  }

  void Expand(const LogicalOp& op) {
    const OpDefinition& definition = *compilation_.registry().Find(op.type);
    const placement::DeviceMesh& mesh = compilation_.meshes[op.placement.mesh];
    std::vector<const std::vector<RegisterId>*> inputs;
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      inputs.push_back(&InputParts(op, static_cast<int>(i)));
      CHECK_EQ(inputs.back()->size(), static_cast<size_t>(mesh.size()))
          << "op '" << op.name << "' input " << i << " has parts for another mesh";
    }
    for (TensorId output : op.outputs) parts_[output].assign(mesh.size(), -1);
    for (int at = 0; at < mesh.size(); ++at) {
      const int device = mesh.devices[at];
      std::vector<TensorType> local_inputs;
      for (const std::vector<RegisterId>* parts : inputs) {
        local_inputs.push_back(tasks_.register_at((*parts)[at]).type);
      }
      std::vector<TensorType> local_outputs;
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        local_outputs.push_back(
            LocalType(graph_.tensor(op.outputs[i]).type, op.placement.outputs[i], mesh.shape));
      }
      TaskDef task;
      task.name = NameAt(op.name, mesh, device);
      task.kind = definition.actor_kind;
      task.device = device;
      task.queue = 0;
      task.period = op.period;
      task.firings = compilation_.schedule.total_pieces() / op.period;
      task.op_type = op.type;
      task.attributes = LocalAttributes(op, definition, mesh, at, local_inputs, local_outputs);
      task.logical_op = op.id;
      task.stage = op.placement.stage;
      task.part = PartOf(op, mesh, at);
      const TaskId id = tasks_.AddTask(std::move(task));
      for (size_t i = 0; i < inputs.size(); ++i) {
        const int phase = static_cast<int>(i) == definition.in_place_input ? 1 : 0;
        tasks_.AddReader((*inputs[i])[at], id, phase);
      }
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        const LogicalTensor& tensor = graph_.tensor(op.outputs[i]);
        TaskRegister reg;
        reg.name = NameAt(tensor.name, mesh, device);
        reg.producer = id;
        reg.device = device;
        reg.type = local_outputs[i];
        reg.period = tensor.period;
        reg.logical_tensor = tensor.id;
        parts_[tensor.id][at] = tasks_.AddRegister(std::move(reg));
      }
    }
  }

  Compilation& compilation_;
  const LogicalGraph& graph_;
  TaskGraph& tasks_;
  BoxingBuilder boxing_;
  std::vector<std::vector<RegisterId>> parts_;  // Tensor -> register per mesh position.
  std::vector<std::vector<RegisterId>> built_;  // Boxing edge -> its destination parts.
  std::vector<int> edges_of_tensor_;
};

}  // namespace

Status ExpandPhysicalPass(Compilation& compilation) {
  return PhysicalExpander(compilation).Run();
}

}  // namespace compiler
}  // namespace softwire
