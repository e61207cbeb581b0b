#include "compiler/compilation.h"

#include "compiler/emitted_plan_check.h"
#include "compiler/ir/graph_text.h"

namespace softwire {
namespace compiler {

Compilation::Compilation(const JobFile& job_file, const CompileOptions& options,
                         const OpRegistry& registry)
    : job_file_(job_file), options_(options), registry_(registry) {}

Status Compilation::ErrorAt(int line, const std::string& message) const {
  std::string location = job_file_.path.empty() ? "<job>" : job_file_.path;
  if (line > 0) location += ":" + std::to_string(line);
  return InvalidArgumentError(location + ": " + message);
}

Status Compilation::OpError(OpId op_id, const std::string& message) const {
  const LogicalOp& op = graph.op(op_id);
  std::string subject = "op '" + op.name + "'";
  if (!op.gradient_of.empty()) subject += " (gradient of '" + op.gradient_of + "')";
  return ErrorAt(op.line, subject + ": " + message);
}

Status Compilation::VerifyLogicalAnnotations() const {
  for (const LogicalTensor& tensor : graph.tensors()) {
    if (types_inferred && !tensor.type.known()) {
      return InternalError("tensor '" + tensor.name + "' has no type after infer_shapes");
    }
    if (periods_assigned && (tensor.period <= 0 || schedule.total_pieces() % tensor.period)) {
      return InternalError("tensor '" + tensor.name + "' has period " +
                           std::to_string(tensor.period));
    }
  }
  for (const LogicalOp& op : graph.ops()) {
    if (registry_.Find(op.type) == nullptr) {
      return InternalError("op '" + op.name + "' has unknown type '" + op.type + "'");
    }
    if (periods_assigned) {
      if (op.period <= 0) return InternalError("op '" + op.name + "' has no period");
      for (TensorId tensor : op.inputs) {
        if (graph.tensor(tensor).period % op.period != 0) {
          return InternalError("op '" + op.name + "' period does not divide input '" +
                               graph.tensor(tensor).name + "'");
        }
      }
    }
    if (staged && (op.placement.stage < 0 || op.placement.stage >= parallel.pipeline)) {
      return InternalError("op '" + op.name + "' has no pipeline stage");
    }
    if (placed) SOFTWIRE_RETURN_IF_ERROR(VerifyPlacement(op));
  }
  return Status::Ok();
}

Status Compilation::VerifyPlacement(const LogicalOp& op) const {
  const std::string where = "op '" + op.name + "'";
  if (op.placement.mesh < 0 || op.placement.mesh >= static_cast<int>(meshes.size())) {
    return InternalError(where + " is not placed on a known mesh");
  }
  if (op.placement.inputs.size() != op.inputs.size() ||
      op.placement.outputs.size() != op.outputs.size()) {
    return InternalError(where + " lacks an nd-sbp for an input or output");
  }
  const placement::DeviceMesh& mesh = meshes[op.placement.mesh];
  for (int device : mesh.devices) {
    if (device < 0 || device >= static_cast<int>(devices.size())) {
      return InternalError(where + " is placed on unknown device " + std::to_string(device));
    }
  }
  auto check = [&](const std::vector<TensorId>& tensors,
                   const std::vector<placement::NdSbp>& layouts) -> Status {
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TensorType& type = graph.tensor(tensors[i]).type;
      if (!placement::SplitsEvenly(type.shape.dims(), layouts[i], mesh.shape)) {
        return InternalError(where + ": tensor '" + graph.tensor(tensors[i]).name + "' " +
                             type.ToString() + " does not split evenly as " +
                             placement::NdSbpToString(layouts[i]) + " on mesh " + mesh.ToString());
      }
    }
    return Status::Ok();
  };
  SOFTWIRE_RETURN_IF_ERROR(check(op.inputs, op.placement.inputs));
  return check(op.outputs, op.placement.outputs);
}

Status Compilation::Verify() const {
  // The logical graph and its annotations again only when a pass may have changed the graph or
  // moved the pipeline to a point where more of them must hold (after the physical expansion
  // most passes touch only the task graph and the plan).
  const LogicalCheckKey key{graph.version(),
                            types_inferred,
                            periods_assigned,
                            staged,
                            placed,
                            schedule.total_pieces(),
                            parallel.pipeline,
                            static_cast<int64_t>(meshes.size()),
                            static_cast<int64_t>(devices.size())};
  if (!(key == verified_logical_)) {
    SOFTWIRE_RETURN_IF_ERROR(graph.Verify());
    SOFTWIRE_RETURN_IF_ERROR(VerifyLogicalAnnotations());
    verified_logical_ = key;
  }
  if (!tasks.empty()) {
    // The registers' annotations again only when a pass may have changed a register (or the
    // slots were not planned at the last check): passes after estimate_costs read them only.
    const bool annotations_checked = verified_task_annotations_ == tasks.annotation_version() &&
                                     verified_task_slots_ == registers_planned;
    if (tasks.structure_version() != verified_task_structure_) {
      // Only what changed since the last check when the graph logged every change since then
      // (TaskGraph::StartChangeLog) and the same invariants apply; else the whole graph.
      if (tasks.ChangeLogComplete() && verified_task_slots_ == registers_planned &&
          verified_task_pieces_ == schedule.total_pieces()) {
        SOFTWIRE_RETURN_IF_ERROR(tasks.VerifyChanged(schedule.total_pieces(), registers_planned));
      } else {
        SOFTWIRE_RETURN_IF_ERROR(tasks.Verify(schedule.total_pieces(), registers_planned));
      }
      verified_task_structure_ = tasks.structure_version();
      verified_task_pieces_ = schedule.total_pieces();
      tasks.StartChangeLog();
    } else if (registers_planned && !annotations_checked) {
      SOFTWIRE_RETURN_IF_ERROR(tasks.VerifyAnnotations());
    }
    verified_task_annotations_ = tasks.annotation_version();
    verified_task_slots_ = registers_planned;
  }
  if (plan.has_value() && plan_version_ != verified_plan_version_) {
    Status plan_status = CheckEmittedPlan(*plan);
    if (!plan_status.ok()) return InternalError("emitted plan: " + plan_status.message());
    verified_plan_version_ = plan_version_;
  }
  return Status::Ok();
}

std::string Compilation::Dump() const {
  std::string text = "# logical graph\n" + LogicalGraphToText(graph);
  // emit_plan moves the task graph's names into the plan: from then on the plan is the dump.
  if (plan.has_value()) return text + "\n# plan\n" + DumpPlan(*plan);
  if (!tasks.empty()) text += "\n# task graph\n" + TaskGraphToText(tasks);
  return text;
}

}  // namespace compiler
}  // namespace softwire
