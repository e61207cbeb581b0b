// emit_plan: the task graph and the compilation's settings as a proto::Plan, the compiler's
// only output. Actors and registers keep their task graph ids. Data and initializer paths stay
// as the job wrote them, lexically normalised: relative to the job file's directory, which the
// hosting node supplies as its data root (data/data_root.h), so the plan names no directory of
// the machine that compiled it. A path the job wrote absolute stays absolute.
//
// The plan is the last thing the compilation makes, so each task's and register's name and
// each task's attributes move into it rather than being copied: a plan of millions of actors
// then needs about half the memory at its peak (Compilation::Dump shows the plan from here on).
#include <filesystem>
#include <map>

#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

// `path` lexically normalised ("./data/../x.npy" -> "x.npy"); empty stays empty.
std::string DataPath(const std::string& path) {
  if (path.empty()) return path;
  return std::filesystem::path(path).lexically_normal().string();
}

proto::DataSource PlanDataSource(const Compilation& compilation, const std::string& name) {
  for (proto::DataSource source : compilation.job().source()) {
    if (source.name() != name) continue;
    if (source.has_npy()) {
      for (std::string& path : *source.mutable_npy()->mutable_path()) path = DataPath(path);
    }
    if (source.has_text()) source.mutable_text()->set_path(DataPath(source.text().path()));
    return source;
  }
  LOG(FATAL) << "no source named '" << name << "'";
  return {};
}

// The job's variables by name (a plan has an actor per variable and device).
std::map<std::string, const proto::Variable*> JobVariables(const Compilation& compilation) {
  std::map<std::string, const proto::Variable*> variables;
  for (const proto::Variable& variable : compilation.job().variable()) {
    variables[variable.name()] = &variable;
  }
  return variables;
}

void EmitVariableSettings(const Compilation& compilation,
                          const std::map<std::string, const proto::Variable*>& variables,
                          const TaskDef& task, proto::ActorDef* actor) {
  const LogicalOp& op = compilation.graph.op(task.logical_op);
  const proto::Variable& variable = *variables.at(op.name);
  proto::VariableActorDef* settings = actor->mutable_variable();
  settings->set_variable(variable.name());
  *settings->mutable_initializer() = variable.initializer();
  if (variable.initializer().has_npy_path()) {
    settings->mutable_initializer()->set_npy_path(DataPath(variable.initializer().npy_path()));
  }
  ToTensorDesc(compilation.graph.tensor(op.outputs[0]).type, settings->mutable_logical_tensor());
  settings->set_split_axis(task.part.split_axis);
  if (task.part.split_axis >= 0) {
    settings->set_split_begin(task.part.begin);
    settings->set_split_end(task.part.end);
  }
}

// The logical tensor a register holds a part of.
const std::string& LogicalName(const Compilation& compilation, RegisterId id) {
  return compilation.graph.tensor(compilation.tasks.register_at(id).logical_tensor).name;
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

void EmitKindSettings(const Compilation& compilation,
                      const std::map<std::string, const proto::Variable*>& variables,
                      const TaskDef& task, proto::ActorDef* actor) {
  switch (task.kind) {
    case proto::ACTOR_KIND_SOURCE:
      *actor->mutable_source()->mutable_dataset() =
          PlanDataSource(compilation, compilation.graph.op(task.logical_op).name);
      actor->mutable_source()->set_sample_begin(task.part.begin);
      actor->mutable_source()->set_sample_end(task.part.end);
      break;
    case proto::ACTOR_KIND_VARIABLE:
      EmitVariableSettings(compilation, variables, task, actor);
      break;
    case proto::ACTOR_KIND_UPDATE:
      actor->mutable_update()->set_variable(LogicalName(compilation, task.inputs[1]));
      if (task.op_type == "running_average_update") break;  // batch_norm's running statistics.
      *actor->mutable_update()->mutable_optimizer() = ResolvedOptimizer(task);
      actor->mutable_update()->set_gradient_scale(task.attributes.GetFloat("gradient_scale"));
      break;
    case proto::ACTOR_KIND_SINK:
      actor->mutable_sink()->set_output(LogicalName(compilation, task.inputs[0]));
      break;
    default:
      break;
  }
}

void EmitActor(const Compilation& compilation,
               const std::map<std::string, const proto::Variable*>& variables, TaskDef& task,
               proto::Plan* plan) {
  const TaskGraph& tasks = compilation.tasks;
  proto::ActorDef* actor = plan->add_actor();
  actor->set_id(task.id);
  actor->set_name(std::move(task.name));
  actor->set_kind(task.kind);
  actor->set_device(task.device);
  actor->set_queue(task.queue);
  // Several firings in flight for the kinds a device queue runs (docs/PROTOCOL.md); unset
  // (one at a time) elsewhere and by default, so plans stay as they were.
  const int32_t max_in_flight = compilation.options().max_in_flight;
  if (max_in_flight > 1 &&
      (task.kind == proto::ACTOR_KIND_COMPUTE || task.kind == proto::ACTOR_KIND_COPY)) {
    actor->set_max_in_flight(max_in_flight);
  }
  // A send has as many fills in flight as its wire register has slots (plan_registers: ~4 MiB,
  // 2 to 8), so the next fill's bytes go out while the last one's completion, Ready and
  // Release travel (docs/DATA_PLANE.md, "Several fills in flight"). Its input's slots bound
  // it too: the protocol never begins more fills than a register has slots.
  if (task.kind == proto::ACTOR_KIND_SEND && task.outputs.size() == 1) {
    const int wire_slots = tasks.register_at(task.outputs[0]).slots;
    if (wire_slots > 1) actor->set_max_in_flight(wire_slots);
  }
  actor->mutable_input_register()->Reserve(static_cast<int>(task.inputs.size()));
  for (RegisterId input : task.inputs) actor->add_input_register(input);
  actor->mutable_output_register()->Reserve(static_cast<int>(task.outputs.size()));
  for (RegisterId output : task.outputs) actor->add_output_register(output);
  actor->set_period(task.period);
  actor->set_firings(task.firings);
  proto::KernelDef* kernel = actor->mutable_kernel();
  kernel->set_op_type(task.op_type);
  kernel->mutable_attr()->Reserve(static_cast<int>(task.attributes.entries().size()));
  for (const auto& [name, value] : task.attributes.entries()) {
    AttributeToProto(name, value, kernel->add_attr());
  }
  // The inputs the kernel reads; ordering inputs, last, have no descriptor
  // (plan/ordering_inputs.h).
  const size_t kernel_inputs = tasks.KernelInputCount(task.id);
  kernel->mutable_input()->Reserve(static_cast<int>(kernel_inputs));
  for (size_t k = 0; k < kernel_inputs; ++k) {
    ToTensorDesc(tasks.InputType(task.id, k), kernel->add_input());
  }
  // Range views (plan/input_ranges.h): one offset per described input, or none.
  if (!task.input_offsets.empty()) {
    for (size_t k = 0; k < kernel_inputs; ++k) kernel->add_input_offset(task.input_offsets[k]);
  }
  CHECK(task.ordering_inputs == 0 || kernel->input_size() > 0)
      << task.name << ": ordering inputs need a kernel that reads an input";
  kernel->mutable_output()->Reserve(static_cast<int>(task.outputs.size()));
  for (RegisterId output : task.outputs) {
    ToTensorDesc(tasks.register_at(output).type, kernel->add_output());
  }
  actor->set_workspace_bytes(task.workspace_bytes);
  actor->set_workspace_offset(task.workspace_offset);
  actor->set_state_bytes(task.state_bytes);
  actor->set_state_offset(task.state_offset);
  actor->set_estimated_seconds(task.estimated_seconds);
  if (task.logical_op >= 0) actor->set_logical_op(compilation.graph.op(task.logical_op).name);
  actor->set_stage(task.stage);
  EmitKindSettings(compilation, variables, task, actor);
  task.attributes = AttributeMap();
}

void EmitRegister(TaskRegister& reg, proto::Plan* plan) {
  proto::RegisterDef* out = plan->add_register_def();
  out->set_id(reg.id);
  out->set_name(std::move(reg.name));
  out->set_producer(reg.producer);
  out->set_device(reg.device);
  out->set_slots(reg.slots);
  ToTensorDesc(reg.type, out->mutable_tensor());
  out->set_bytes_per_slot(reg.bytes_per_slot);
  out->set_offset(reg.offset);
  out->set_period(reg.period);
  out->mutable_consumer()->Reserve(static_cast<int>(reg.readers.size()));
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
    const auto views = compilation.view_bytes.find(target.id);
    if (views != compilation.view_bytes.end()) device->set_view_bytes(views->second);
  }
}

// Task ids by logical op, to find each output's sink and each variable's parts.
std::vector<std::vector<TaskId>> TasksByLogicalOp(const Compilation& compilation) {
  std::vector<std::vector<TaskId>> by_op(compilation.graph.op_count());
  for (const TaskDef& task : compilation.tasks.tasks()) {
    if (task.logical_op >= 0) by_op[task.logical_op].push_back(task.id);
  }
  return by_op;
}

// One part per distinct slice a variable's actors hold; replicas are listed once.
void EmitVariable(const Compilation& compilation, const LogicalOp& op,
                  const std::vector<TaskId>& actors, proto::Plan* plan) {
  proto::PlanVariable* variable = plan->add_variable();
  variable->set_name(op.name);
  *variable->mutable_tensor() = ToTensorDesc(compilation.graph.tensor(op.outputs[0]).type);
  for (TaskId id : actors) {
    const TaskDef& task = compilation.tasks.task(id);
    bool listed = false;
    for (const proto::VariablePart& part : variable->part()) {
      listed |= part.split_axis() == task.part.split_axis &&
                part.split_begin() == (task.part.split_axis >= 0 ? task.part.begin : 0) &&
                part.split_end() == (task.part.split_axis >= 0 ? task.part.end : 0);
    }
    if (listed) continue;
    proto::VariablePart* part = variable->add_part();
    part->set_register_id(task.outputs[0]);
    part->set_split_axis(task.part.split_axis);
    if (task.part.split_axis >= 0) {
      part->set_split_begin(task.part.begin);
      part->set_split_end(task.part.end);
    }
  }
}

void EmitOutputsAndVariables(const Compilation& compilation, proto::Plan* plan) {
  std::vector<std::vector<TaskId>> tasks_of = TasksByLogicalOp(compilation);
  for (const CompilationOutput& output : compilation.outputs) {
    proto::PlanOutput* out = plan->add_output();
    out->set_name(output.name);
    out->set_is_loss(output.is_loss);
    out->set_sink_actor(tasks_of.at(output.sink).at(0));
  }
  for (const TaskDef& task : compilation.tasks.tasks()) {
    if (task.kind != proto::ACTOR_KIND_VARIABLE) continue;
    const std::vector<TaskId>& actors = tasks_of[task.logical_op];
    if (actors.front() != task.id) continue;  // Each variable once, at its first actor.
    EmitVariable(compilation, compilation.graph.op(task.logical_op), actors, plan);
  }
}

}  // namespace

Status EmitPlanPass(Compilation& compilation) {
  proto::Plan plan;
  plan.set_job_name(compilation.job().name());
  plan.set_precision(compilation.precision.precision);
  plan.set_precision_reason(compilation.precision.reason);
  EmitDevices(compilation, &plan);
  plan.mutable_register_def()->Reserve(static_cast<int>(compilation.tasks.registers().size()));
  for (TaskRegister& reg : compilation.tasks.mutable_registers()) EmitRegister(reg, &plan);
  plan.mutable_actor()->Reserve(static_cast<int>(compilation.tasks.tasks().size()));
  const std::map<std::string, const proto::Variable*> variables = JobVariables(compilation);
  for (TaskDef& task : compilation.tasks.mutable_tasks()) {
    EmitActor(compilation, variables, task, &plan);
  }
  proto::Schedule* schedule = plan.mutable_schedule();
  schedule->set_steps(compilation.schedule.steps);
  schedule->set_pieces_per_step(compilation.schedule.pieces_per_step);
  schedule->set_micro_batch_size(compilation.schedule.micro_batch_size);
  EmitOutputsAndVariables(compilation, &plan);
  compilation.plan = std::move(plan);
  compilation.MarkPlanChanged();
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
