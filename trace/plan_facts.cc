#include "trace/plan_facts.h"

#include <set>

#include "plan/labels.h"
#include "proto/fused_program.h"
#include "proto/tensor_desc.h"

namespace softwire {
namespace trace {
namespace {

// The op type, and for a fused kernel the ops its program holds: "fused: bias_add+relu".
std::string OpLabel(const proto::KernelDef& kernel) {
  if (kernel.op_type() != "fused") return kernel.op_type();
  for (const proto::Attribute& attribute : kernel.attr()) {
    if (attribute.name() != "program") continue;
    StatusOr<FusedProgram> program = ParseFusedProgram(attribute.string());
    if (program.ok()) return "fused: " + FusedOpsLabel(*program);
  }
  return kernel.op_type();
}

}  // namespace

int PlanFacts::stages() const {
  std::set<int32_t> stages;
  for (const ActorFacts& actor : actors) stages.insert(actor.stage);
  return std::max<int>(1, static_cast<int>(stages.size()));
}

PlanFacts DescribePlan(const proto::Plan& plan) {
  PlanFacts facts;
  facts.job_name = plan.job_name();
  facts.steps = plan.schedule().steps();
  facts.pieces_per_step = std::max<int64_t>(1, plan.schedule().pieces_per_step());
  facts.micro_batch_size = plan.schedule().micro_batch_size();
  for (const proto::PlanDevice& device : plan.device()) {
    DeviceFacts d;
    d.node = device.node();
    d.name = plan::DeviceName(device);
    d.kind = plan::DeviceKindName(device.kind());
    if (device.kind() == proto::DEVICE_KIND_CPU) {
      std::string first = plan::DeviceThreadName(device, 0);
      d.kernel_threads = first.substr(0, first.size() - 1) + "*";
    }
    d.planned_bytes = device.planned_bytes();
    d.register_bytes = device.register_bytes();
    d.workspace_bytes = device.workspace_bytes();
    d.state_bytes = device.state_bytes();
    facts.devices.push_back(std::move(d));
  }
  for (const proto::ActorDef& actor : plan.actor()) {
    ActorFacts a;
    a.name = actor.name();
    a.kind = plan::ActorKindName(actor.kind());
    a.op_type = OpLabel(actor.kernel());
    a.device = actor.device();
    a.queue = actor.queue();
    a.stage = actor.stage();
    a.period = std::max<int64_t>(1, actor.period());
    a.firings = actor.firings();
    for (int64_t id : actor.input_register()) a.inputs.push_back(static_cast<int32_t>(id));
    for (int64_t id : actor.output_register()) a.outputs.push_back(static_cast<int32_t>(id));
    a.workspace_bytes = actor.workspace_bytes();
    a.state_bytes = actor.state_bytes();
    facts.actors.push_back(std::move(a));
  }
  for (const proto::RegisterDef& r : plan.register_def()) {
    RegisterFacts f;
    f.name = r.name();
    f.producer = static_cast<int32_t>(r.producer());
    f.device = r.device();
    f.slots = std::max(1, r.slots());
    f.bytes_per_slot = r.bytes_per_slot();
    f.dtype = DTypeName(DTypeOf(r.tensor()));
    f.period = std::max<int64_t>(1, r.period());
    for (const proto::RegisterConsumer& consumer : r.consumer()) {
      if (consumer.phase() == 1) {
        f.phase1_consumer = static_cast<int32_t>(consumer.actor());
      } else {
        f.consumers.push_back(static_cast<int32_t>(consumer.actor()));
      }
    }
    facts.registers.push_back(std::move(f));
  }
  return facts;
}

Status CheckPlanFacts(const PlanFacts& facts) {
  const int64_t devices = static_cast<int64_t>(facts.devices.size());
  const int64_t actors = static_cast<int64_t>(facts.actors.size());
  const int64_t registers = static_cast<int64_t>(facts.registers.size());
  if (facts.pieces_per_step < 1) return InvalidArgumentError("pieces per step must be >= 1");
  auto actor_ok = [&](int64_t id) { return id >= 0 && id < actors; };
  auto register_ok = [&](int64_t id) { return id >= 0 && id < registers; };
  for (int64_t i = 0; i < actors; ++i) {
    const ActorFacts& a = facts.actors[static_cast<size_t>(i)];
    const std::string what = "actor " + std::to_string(i) + " ('" + a.name + "')";
    if (a.device < 0 || a.device >= devices) return InvalidArgumentError(what + ": bad device");
    if (a.period < 1) return InvalidArgumentError(what + ": period must be >= 1");
    if (a.queue < 0) return InvalidArgumentError(what + ": bad queue");
    for (int32_t id : a.inputs) {
      if (!register_ok(id)) return InvalidArgumentError(what + ": bad input register");
    }
    for (int32_t id : a.outputs) {
      if (!register_ok(id)) return InvalidArgumentError(what + ": bad output register");
    }
  }
  for (int64_t i = 0; i < registers; ++i) {
    const RegisterFacts& r = facts.registers[static_cast<size_t>(i)];
    const std::string what = "register " + std::to_string(i) + " ('" + r.name + "')";
    if (!actor_ok(r.producer)) return InvalidArgumentError(what + ": bad producer");
    if (r.device < 0 || r.device >= devices) return InvalidArgumentError(what + ": bad device");
    if (r.slots < 1 || r.period < 1) {
      return InvalidArgumentError(what + ": slots and period must be >= 1");
    }
    if (r.period % facts.actors[static_cast<size_t>(r.producer)].period != 0) {
      return InvalidArgumentError(what + ": period is no multiple of its producer's");
    }
    for (int32_t id : r.consumers) {
      if (!actor_ok(id) || r.period % facts.actors[static_cast<size_t>(id)].period != 0) {
        return InvalidArgumentError(what + ": bad consumer");
      }
    }
    if (r.phase1_consumer != -1 &&
        (!actor_ok(r.phase1_consumer) ||
         r.period % facts.actors[static_cast<size_t>(r.phase1_consumer)].period != 0)) {
      return InvalidArgumentError(what + ": bad phase-1 consumer");
    }
  }
  return Status::Ok();
}

}  // namespace trace
}  // namespace softwire
