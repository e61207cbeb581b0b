#include "trace/plan_facts_json.h"

#include <cmath>
#include <string>
#include <vector>

#include "trace/json.h"

namespace softwire {
namespace trace {
std::string PlanFactsToJson(const PlanFacts& facts) {
  std::string out = "{\"job\":";
  AppendJsonString(&out, facts.job_name);
  out += ",\"steps\":";
  AppendInt(&out, facts.steps);
  out += ",\"pieces_per_step\":";
  AppendInt(&out, facts.pieces_per_step);
  out += ",\"micro_batch_size\":";
  AppendInt(&out, facts.micro_batch_size);
  out += ",\n\"devices\":[";
  for (size_t i = 0; i < facts.devices.size(); ++i) {
    const DeviceFacts& d = facts.devices[i];
    if (i > 0) out += ",";
    out += "\n{\"name\":";
    AppendJsonString(&out, d.name);
    out += ",\"node\":";
    AppendJsonString(&out, d.node);
    out += ",\"kind\":";
    AppendJsonString(&out, d.kind);
    out += ",\"planned_bytes\":";
    AppendInt(&out, d.planned_bytes);
    out += ",\"register_bytes\":";
    AppendInt(&out, d.register_bytes);
    out += ",\"workspace_bytes\":";
    AppendInt(&out, d.workspace_bytes);
    out += ",\"state_bytes\":";
    AppendInt(&out, d.state_bytes);
    out += "}";
  }
  out += "],\n\"actors\":[";
  for (size_t i = 0; i < facts.actors.size(); ++i) {
    const ActorFacts& a = facts.actors[i];
    if (i > 0) out += ",";
    out += "\n{\"name\":";
    AppendJsonString(&out, a.name);
    out += ",\"kind\":";
    AppendJsonString(&out, a.kind);
    out += ",\"op\":";
    AppendJsonString(&out, a.op_type);
    out += ",\"device\":";
    AppendInt(&out, a.device);
    out += ",\"queue\":";
    AppendInt(&out, a.queue);
    out += ",\"stage\":";
    AppendInt(&out, a.stage);
    out += ",\"period\":";
    AppendInt(&out, a.period);
    out += ",\"firings\":";
    AppendInt(&out, a.firings);
    out += ",\"inputs\":";
    AppendIntArray(&out, a.inputs);
    out += ",\"outputs\":";
    AppendIntArray(&out, a.outputs);
    out += ",\"workspace_bytes\":";
    AppendInt(&out, a.workspace_bytes);
    out += ",\"state_bytes\":";
    AppendInt(&out, a.state_bytes);
    out += "}";
  }
  out += "],\n\"registers\":[";
  for (size_t i = 0; i < facts.registers.size(); ++i) {
    const RegisterFacts& r = facts.registers[i];
    if (i > 0) out += ",";
    out += "\n{\"name\":";
    AppendJsonString(&out, r.name);
    out += ",\"producer\":";
    AppendInt(&out, r.producer);
    out += ",\"device\":";
    AppendInt(&out, r.device);
    out += ",\"slots\":";
    AppendInt(&out, r.slots);
    out += ",\"bytes_per_slot\":";
    AppendInt(&out, r.bytes_per_slot);
    out += ",\"dtype\":";
    AppendJsonString(&out, r.dtype);
    out += ",\"period\":";
    AppendInt(&out, r.period);
    out += ",\"consumers\":";
    AppendIntArray(&out, r.consumers);
    out += ",\"phase1_consumer\":";
    AppendInt(&out, r.phase1_consumer);
    out += "}";
  }
  out += "]}";
  return out;
}

StatusOr<PlanFacts> PlanFactsFromJson(const Json& value) {
  if (!value.is_object()) return DataLossError("otherData.plan is not an object");
  PlanFacts facts;
  facts.job_name = StringOr(value, "job", "");
  facts.steps = IntOr(value, "steps", 0);
  facts.pieces_per_step = IntOr(value, "pieces_per_step", 1);
  facts.micro_batch_size = IntOr(value, "micro_batch_size", 0);
  const Json* devices = ArrayMember(value, "devices");
  const Json* actors = ArrayMember(value, "actors");
  const Json* registers = ArrayMember(value, "registers");
  if (devices == nullptr || actors == nullptr || registers == nullptr) {
    return DataLossError("otherData.plan lacks its devices, actors or registers");
  }
  for (const Json& d : *devices) {
    DeviceFacts device;
    device.name = StringOr(d, "name", "");
    device.node = StringOr(d, "node", "");
    device.kind = StringOr(d, "kind", "");
    device.planned_bytes = IntOr(d, "planned_bytes", 0);
    device.register_bytes = IntOr(d, "register_bytes", 0);
    device.workspace_bytes = IntOr(d, "workspace_bytes", 0);
    device.state_bytes = IntOr(d, "state_bytes", 0);
    facts.devices.push_back(std::move(device));
  }
  for (const Json& a : *actors) {
    ActorFacts actor;
    actor.name = StringOr(a, "name", "");
    actor.kind = StringOr(a, "kind", "");
    actor.op_type = StringOr(a, "op", "");
    actor.device = static_cast<int32_t>(IntOr(a, "device", -1));
    actor.queue = static_cast<int32_t>(IntOr(a, "queue", 0));
    actor.stage = static_cast<int32_t>(IntOr(a, "stage", 0));
    actor.period = IntOr(a, "period", 0);
    actor.firings = IntOr(a, "firings", 0);
    actor.inputs = IntList(Find(a, "inputs"));
    actor.outputs = IntList(Find(a, "outputs"));
    actor.workspace_bytes = IntOr(a, "workspace_bytes", 0);
    actor.state_bytes = IntOr(a, "state_bytes", 0);
    facts.actors.push_back(std::move(actor));
  }
  for (const Json& r : *registers) {
    RegisterFacts reg;
    reg.name = StringOr(r, "name", "");
    reg.producer = static_cast<int32_t>(IntOr(r, "producer", -1));
    reg.device = static_cast<int32_t>(IntOr(r, "device", -1));
    reg.slots = static_cast<int32_t>(IntOr(r, "slots", 0));
    reg.bytes_per_slot = IntOr(r, "bytes_per_slot", 0);
    reg.dtype = StringOr(r, "dtype", "");
    reg.period = IntOr(r, "period", 0);
    reg.consumers = IntList(Find(r, "consumers"));
    reg.phase1_consumer = static_cast<int32_t>(IntOr(r, "phase1_consumer", -1));
    facts.registers.push_back(std::move(reg));
  }
  Status checked = CheckPlanFacts(facts);
  if (!checked.ok()) return DataLossError("otherData.plan: " + checked.message());
  return facts;
}

}  // namespace trace
}  // namespace softwire
