// emit_plan: the task graph and the compilation's settings as a proto::Plan, the compiler's
// only output. Actors and registers keep their task graph ids; data and initializer paths
// become absolute so a plan runs from any working directory.
#include <filesystem>
#include <map>

#include "base/file.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

std::string AbsolutePath(const std::string& directory, const std::string& path) {
  return std::filesystem::absolute(ResolvePath(directory, path)).lexically_normal().string();
}

proto::DataSource ResolvedDataSource(const Compilation& compilation, const std::string& name) {
  const std::string& directory = compilation.job_file().directory;
  for (proto::DataSource source : compilation.job().source()) {
    if (source.name() != name) continue;
    if (source.has_npy()) {
      for (std::string& path : *source.mutable_npy()->mutable_path()) {
        path = AbsolutePath(directory, path);
      }
    }
    if (source.has_text()) {
      source.mutable_text()->set_path(AbsolutePath(directory, source.text().path()));
    }
    return source;
  }
  LOG(FATAL) << "no source named '" << name << "'";
  return {};
}

const proto::Variable& JobVariable(const Compilation& compilation, const std::string& name) {
  for (const proto::Variable& variable : compilation.job().variable()) {
    if (variable.name() == name) return variable;
  }
  LOG(FATAL) << "no variable named '" << name << "'";
  return compilation.job().variable(0);
}

void EmitVariableSettings(const Compilation& compilation, const TaskDef& task,
                          proto::ActorDef* actor) {
  const proto::Variable& variable = JobVariable(compilation, task.name);
  proto::VariableActorDef* settings = actor->mutable_variable();
  settings->set_variable(variable.name());
  *settings->mutable_initializer() = variable.initializer();
  if (variable.initializer().has_npy_path()) {
    settings->mutable_initializer()->set_npy_path(
        AbsolutePath(compilation.job_file().directory, variable.initializer().npy_path()));
  }
  *settings->mutable_logical_tensor() =
      ToTensorDesc(compilation.tasks.register_at(task.outputs[0]).type);
  settings->set_split_axis(-1);
}

// The optimizer as the update actor applies it: the job's settings with "0 means default"
// fields resolved, exactly as the kernel attributes say.
proto::Optimizer ResolvedOptimizer(const TaskDef& task) {
  proto::Optimizer optimizer;
  const AttributeMap& attributes = task.attributes;
  if (task.op_type == "sgd_update") {
    proto::SgdOptimizer* sgd = optimizer.mutable_sgd();
    sgd->set_learning_rate(attributes.GetFloat("learning_rate"));
    sgd->set_momentum(attributes.GetFloat("momentum"));
    sgd->set_weight_decay(attributes.GetFloat("weight_decay"));
  } else {
    proto::AdamOptimizer* adam = optimizer.mutable_adam();
    adam->set_learning_rate(attributes.GetFloat("learning_rate"));
    adam->set_beta1(attributes.GetFloat("beta1"));
    adam->set_beta2(attributes.GetFloat("beta2"));
    adam->set_epsilon(attributes.GetFloat("epsilon"));
    adam->set_weight_decay(attributes.GetFloat("weight_decay"));
  }
  return optimizer;
}

void EmitKindSettings(const Compilation& compilation, const TaskDef& task, proto::ActorDef* actor) {
  const TaskGraph& tasks = compilation.tasks;
  switch (task.kind) {
    case proto::ACTOR_KIND_SOURCE:
      *actor->mutable_source()->mutable_dataset() = ResolvedDataSource(compilation, task.name);
      actor->mutable_source()->set_sample_begin(0);
      actor->mutable_source()->set_sample_end(compilation.schedule.micro_batch_size);
      break;
    case proto::ACTOR_KIND_VARIABLE:
      EmitVariableSettings(compilation, task, actor);
      break;
    case proto::ACTOR_KIND_UPDATE:
      actor->mutable_update()->set_variable(tasks.register_at(task.inputs[1]).name);
      *actor->mutable_update()->mutable_optimizer() = ResolvedOptimizer(task);
      actor->mutable_update()->set_gradient_scale(task.attributes.GetFloat("gradient_scale"));
      break;
    case proto::ACTOR_KIND_SINK:
      actor->mutable_sink()->set_output(tasks.register_at(task.inputs[0]).name);
      break;
    default:
      break;
  }
}

void EmitActor(const Compilation& compilation, const TaskDef& task, proto::Plan* plan) {
  const TaskGraph& tasks = compilation.tasks;
  proto::ActorDef* actor = plan->add_actor();
  actor->set_id(task.id);
  actor->set_name(task.name);
  actor->set_kind(task.kind);
  actor->set_device(task.device);
  actor->set_queue(task.queue);
  for (RegisterId input : task.inputs) actor->add_input_register(input);
  for (RegisterId output : task.outputs) actor->add_output_register(output);
  actor->set_period(task.period);
  actor->set_firings(task.firings);
  proto::KernelDef* kernel = actor->mutable_kernel();
  kernel->set_op_type(task.op_type);
  for (const auto& [name, value] : task.attributes.entries()) {
    *kernel->add_attr() = AttributeToProto(name, value);
  }
  for (RegisterId input : task.inputs)
    *kernel->add_input() = ToTensorDesc(tasks.register_at(input).type);
  for (RegisterId output : task.outputs) {
    *kernel->add_output() = ToTensorDesc(tasks.register_at(output).type);
  }
  actor->set_workspace_bytes(task.workspace_bytes);
  actor->set_workspace_offset(task.workspace_offset);
  actor->set_state_bytes(task.state_bytes);
  actor->set_state_offset(task.state_offset);
  actor->set_estimated_seconds(task.estimated_seconds);
  actor->set_logical_op(compilation.graph.op(task.logical_op).name);
  actor->set_stage(task.stage);
  EmitKindSettings(compilation, task, actor);
}

void EmitRegister(const TaskRegister& reg, proto::Plan* plan) {
  proto::RegisterDef* out = plan->add_register_();
  out->set_id(reg.id);
  out->set_name(reg.name);
  out->set_producer(reg.producer);
  out->set_device(reg.device);
  out->set_slots(reg.slots);
  *out->mutable_tensor() = ToTensorDesc(reg.type);
  out->set_bytes_per_slot(reg.bytes_per_slot);
  out->set_offset(reg.offset);
  out->set_period(reg.period);
  for (const RegisterReader& reader : reg.readers) {
    proto::RegisterConsumer* consumer = out->add_consumer();
    consumer->set_actor(reader.task);
    consumer->set_phase(reader.phase);
  }
}

void EmitDevices(const Compilation& compilation, proto::Plan* plan) {
  for (const TargetDevice& target : compilation.devices) {
    const DeviceMemoryPlan& memory = compilation.device_memory.at(target.id);
    proto::PlanDevice* device = plan->add_device();
    device->set_id(target.id);
    device->set_node(target.node);
    device->set_name(target.spec.name());
    device->set_kind(target.spec.kind());
    device->set_cores(target.spec.cores());
    device->set_memory_budget(target.spec.memory_bytes());
    device->set_planned_bytes(memory.planned_bytes);
    device->set_register_bytes(memory.register_bytes);
    device->set_workspace_bytes(memory.workspace_bytes);
    device->set_state_bytes(memory.state_bytes);
  }
}

// Task ids by logical op, to find each output's sink and each variable's register.
std::map<OpId, TaskId> TasksByLogicalOp(const TaskGraph& tasks) {
  std::map<OpId, TaskId> by_op;
  for (const TaskDef& task : tasks.tasks()) by_op[task.logical_op] = task.id;
  return by_op;
}

void EmitOutputsAndVariables(const Compilation& compilation, proto::Plan* plan) {
  std::map<OpId, TaskId> task_of = TasksByLogicalOp(compilation.tasks);
  for (const CompilationOutput& output : compilation.outputs) {
    proto::PlanOutput* out = plan->add_output();
    out->set_name(output.name);
    out->set_is_loss(output.is_loss);
    out->set_sink_actor(task_of.at(output.sink));
  }
  for (const TaskDef& task : compilation.tasks.tasks()) {
    if (task.kind != proto::ACTOR_KIND_VARIABLE) continue;
    const TaskRegister& reg = compilation.tasks.register_at(task.outputs[0]);
    proto::PlanVariable* variable = plan->add_variable();
    variable->set_name(task.name);
    *variable->mutable_tensor() = ToTensorDesc(reg.type);
    proto::VariablePart* part = variable->add_part();
    part->set_register_(reg.id);
    part->set_split_axis(-1);
  }
}

}  // namespace

Status EmitPlanPass(Compilation& compilation) {
  proto::Plan plan;
  plan.set_job_name(compilation.job().name());
  plan.set_job_directory(compilation.job_file().directory);
  EmitDevices(compilation, &plan);
  for (const TaskRegister& reg : compilation.tasks.registers()) EmitRegister(reg, &plan);
  for (const TaskDef& task : compilation.tasks.tasks()) EmitActor(compilation, task, &plan);
  proto::Schedule* schedule = plan.mutable_schedule();
  schedule->set_steps(compilation.schedule.steps);
  schedule->set_pieces_per_step(compilation.schedule.pieces_per_step);
  schedule->set_micro_batch_size(compilation.schedule.micro_batch_size);
  EmitOutputsAndVariables(compilation, &plan);
  compilation.plan = std::move(plan);
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
