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

StatusOr<PlanFacts> PlanFactsFromJson(const JsonValue& value) {
  if (!value.is_object()) return DataLossError("otherData.plan is not an object");
  PlanFacts facts;
  facts.job_name = value.StringOr("job", "");
  facts.steps = value.IntOr("steps", 0);
  facts.pieces_per_step = value.IntOr("pieces_per_step", 1);
  facts.micro_batch_size = value.IntOr("micro_batch_size", 0);
  const JsonValue* devices = ArrayMember(value, "devices");
  const JsonValue* actors = ArrayMember(value, "actors");
  const JsonValue* registers = ArrayMember(value, "registers");
  if (devices == nullptr || actors == nullptr || registers == nullptr) {
    return DataLossError("otherData.plan lacks its devices, actors or registers");
  }
  for (const JsonValue& d : devices->array()) {
    DeviceFacts device;
    device.name = d.StringOr("name", "");
    device.node = d.StringOr("node", "");
    device.kind = d.StringOr("kind", "");
    device.planned_bytes = d.IntOr("planned_bytes", 0);
    device.register_bytes = d.IntOr("register_bytes", 0);
    device.workspace_bytes = d.IntOr("workspace_bytes", 0);
    device.state_bytes = d.IntOr("state_bytes", 0);
    facts.devices.push_back(std::move(device));
  }
  for (const JsonValue& a : actors->array()) {
    ActorFacts actor;
    actor.name = a.StringOr("name", "");
    actor.kind = a.StringOr("kind", "");
    actor.op_type = a.StringOr("op", "");
    actor.device = static_cast<int32_t>(a.IntOr("device", -1));
    actor.queue = static_cast<int32_t>(a.IntOr("queue", 0));
    actor.stage = static_cast<int32_t>(a.IntOr("stage", 0));
    actor.period = a.IntOr("period", 0);
    actor.firings = a.IntOr("firings", 0);
    actor.inputs = IntList(a.Find("inputs"));
    actor.outputs = IntList(a.Find("outputs"));
    actor.workspace_bytes = a.IntOr("workspace_bytes", 0);
    actor.state_bytes = a.IntOr("state_bytes", 0);
    facts.actors.push_back(std::move(actor));
  }
  for (const JsonValue& r : registers->array()) {
    RegisterFacts reg;
    reg.name = r.StringOr("name", "");
    reg.producer = static_cast<int32_t>(r.IntOr("producer", -1));
    reg.device = static_cast<int32_t>(r.IntOr("device", -1));
    reg.slots = static_cast<int32_t>(r.IntOr("slots", 0));
    reg.bytes_per_slot = r.IntOr("bytes_per_slot", 0);
    reg.period = r.IntOr("period", 0);
    reg.consumers = IntList(r.Find("consumers"));
    reg.phase1_consumer = static_cast<int32_t>(r.IntOr("phase1_consumer", -1));
    facts.registers.push_back(std::move(reg));
  }
  Status checked = CheckPlanFacts(facts);
  if (!checked.ok()) return DataLossError("otherData.plan: " + checked.message());
  return facts;
}

}  // namespace trace
}  // namespace softwire
