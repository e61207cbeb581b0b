#include "trace/chrome_trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/file.h"
#include "trace/json.h"

namespace softwire {
namespace trace {
namespace {

constexpr char kFormat[] = "softwire-trace/1";

// Where a slice sits in the file: process and thread, and its (possibly shortened) interval.
struct Slice {
  int pid = 0;
  int64_t tid = 0;
  TimeNs start = 0;
  TimeNs end = 0;
  bool is_firing = true;
  size_t index = 0;  // Into model.firings or model.waits.
};

int DevicePid(int32_t device) {
  return device + 1;
}

std::string QueueName(int32_t queue) {
  return "queue " + std::to_string(queue) + (queue == 0 ? " (compute)" : " (copy)");
}

// "slots x", or "slots x#3" when two registers share the name x.
std::vector<std::string> CounterNames(const PlanFacts& plan) {
  std::map<std::string, int> uses;
  for (const RegisterFacts& reg : plan.registers) ++uses[reg.name];
  std::vector<std::string> names;
  for (size_t i = 0; i < plan.registers.size(); ++i) {
    const std::string& name = plan.registers[i].name;
    names.push_back("slots " + name + (uses[name] > 1 ? "#" + std::to_string(i) : ""));
  }
  return names;
}

std::string ActorLabel(const PlanFacts& plan, int32_t id) {
  if (id < 0 || id >= static_cast<int32_t>(plan.actors.size())) {
    return "actor #" + std::to_string(id);
  }
  return "actor '" + plan.actors[static_cast<size_t>(id)].name + "'";
}

std::string RegisterLabel(const PlanFacts& plan, int32_t id) {
  if (id < 0 || id >= static_cast<int32_t>(plan.registers.size())) {
    return "register #" + std::to_string(id);
  }
  return "'" + plan.registers[static_cast<size_t>(id)].name + "'";
}

std::string CauseText(const PlanFacts& plan, const Cause& cause) {
  switch (cause.kind) {
    case CauseKind::kInput:
      return "input " + RegisterLabel(plan, cause.register_id) + " fill " +
             std::to_string(cause.sequence) + " from " + ActorLabel(plan, cause.actor);
    case CauseKind::kSlot:
      return "slot of " + RegisterLabel(plan, cause.register_id) + ": fill " +
             std::to_string(cause.sequence) + " released by " + ActorLabel(plan, cause.actor);
    case CauseKind::kPreviousFiring:
      return "previous firing " + std::to_string(cause.sequence) + " completed";
    case CauseKind::kStart:
      return "started";
    case CauseKind::kNone:
      break;
  }
  return "unknown";
}

std::string ActorListText(const PlanFacts& plan, const std::vector<int32_t>& ids) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) text += i + 1 == ids.size() ? " and " : ", ";
    text += ActorLabel(plan, ids[i]);
  }
  return text.empty() ? "nobody" : text;
}

void AppendIntArray(std::string* out, const std::vector<int32_t>& values) {
  out->push_back('[');
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendInt(out, values[i]);
  }
  out->push_back(']');
}

void AppendNameArray(std::string* out, const PlanFacts& plan, const std::vector<int32_t>& ids) {
  out->push_back('[');
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(out, plan.registers[static_cast<size_t>(ids[i])].name);
  }
  out->push_back(']');
}

// Lays every firing and wait on its thread and shortens the ones that would partly overlap
// the previous slice of that thread. Returns the number shortened.
int64_t LaySlices(const TraceModel& model, std::vector<Slice>* slices) {
  const int actors_pid = static_cast<int>(model.plan.devices.size()) + 1;
  for (size_t i = 0; i < model.firings.size(); ++i) {
    const FiringRecord& firing = model.firings[i];
    const ActorFacts& actor = model.plan.actors[static_cast<size_t>(firing.actor)];
    slices->push_back(
        Slice{DevicePid(actor.device), actor.queue, firing.start, firing.end, true, i});
  }
  for (size_t i = 0; i < model.waits.size(); ++i) {
    const WaitRecord& wait = model.waits[i];
    slices->push_back(Slice{actors_pid, wait.actor, wait.start, wait.end, false, i});
  }
  std::vector<size_t> order(slices->size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Slice& x = (*slices)[a];
    const Slice& y = (*slices)[b];
    if (x.pid != y.pid) return x.pid < y.pid;
    if (x.tid != y.tid) return x.tid < y.tid;
    return x.start != y.start ? x.start < y.start : x.end < y.end;
  });
  int64_t adjusted = 0;
  for (size_t k = 1; k < order.size(); ++k) {
    const Slice& previous = (*slices)[order[k - 1]];
    Slice& slice = (*slices)[order[k]];
    if (slice.pid != previous.pid || slice.tid != previous.tid) continue;
    if (slice.start < previous.end) {
      slice.start = previous.end;
      slice.end = std::max(slice.end, slice.start);
      ++adjusted;
    }
  }
  return adjusted;
}

void AppendMetadata(std::string* out, const char* name, int pid, const int64_t* tid,
                    const std::string& key, const std::string& text, int64_t number,
                    bool is_number) {
  out->append("{\"name\":\"");
  out->append(name);
  out->append("\",\"ph\":\"M\",\"pid\":");
  AppendInt(out, pid);
  if (tid != nullptr) {
    out->append(",\"tid\":");
    AppendInt(out, *tid);
  }
  out->append(",\"args\":{");
  AppendJsonString(out, key);
  out->push_back(':');
  if (is_number) {
    AppendInt(out, number);
  } else {
    AppendJsonString(out, text);
  }
  out->append("}},\n");
}

void AppendOtherData(std::string* out, const TraceModel& model, int64_t adjusted) {
  const RecordingInfo& info = model.info;
  out->append("\"otherData\":{\"format\":");
  AppendJsonString(out, kFormat);
  out->append(",\"job\":");
  AppendJsonString(out, model.plan.job_name);
  out->append(",\"engine\":");
  AppendJsonString(out, info.engine);
  out->append(",\"clock\":");
  AppendJsonString(out, info.clock);
  out->append(",\"origin_ns\":");
  AppendInt(out, info.origin_ns);
  out->append(",\"steps\":");
  AppendInt(out, model.plan.steps);
  out->append(",\"pieces_per_step\":");
  AppendInt(out, model.plan.pieces_per_step);
  out->append(",\"event_cap\":");
  AppendInt(out, info.event_cap);
  out->append(",\"events_recorded\":");
  AppendInt(out, info.events_recorded);
  out->append(",\"events_dropped\":");
  AppendInt(out, info.events_dropped);
  out->append(",\"step_window\":");
  AppendJsonString(out, info.window.ToString());
  out->append(",\"adjusted_slices\":");
  AppendInt(out, adjusted);
  out->append(",\"outcome\":");
  AppendJsonString(out, info.outcome);
  out->append(",\"clock_offsets\":[");
  for (size_t i = 0; i < info.clock_offsets.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append("{\"node\":");
    AppendJsonString(out, info.clock_offsets[i].node);
    out->append(",\"offset_ns\":");
    AppendInt(out, info.clock_offsets[i].offset_ns);
    out->append(",\"error_ns\":");
    AppendInt(out, info.clock_offsets[i].error_ns);
    out->push_back('}');
  }
  out->append("],\n\"plan\":");
  out->append(PlanFactsToJson(model.plan));
  out->append("},\n");
}

void AppendFiring(std::string* out, const TraceModel& model, const FiringRecord& firing,
                  const Slice& slice) {
  const PlanFacts& plan = model.plan;
  const ActorFacts& actor = plan.actors[static_cast<size_t>(firing.actor)];
  out->append("{\"name\":");
  AppendJsonString(out, actor.name);
  out->append(",\"cat\":");
  AppendJsonString(out, actor.kind);
  out->append(",\"ph\":\"X\",\"pid\":");
  AppendInt(out, slice.pid);
  out->append(",\"tid\":");
  AppendInt(out, slice.tid);
  out->append(",\"ts\":");
  AppendMicros(out, slice.start);
  out->append(",\"dur\":");
  AppendMicros(out, slice.end - slice.start);
  out->append(",\"args\":{\"actor\":");
  AppendInt(out, firing.actor);
  out->append(",\"kind\":");
  AppendJsonString(out, actor.kind);
  out->append(",\"op\":");
  AppendJsonString(out, actor.op_type);
  out->append(",\"firing\":");
  AppendInt(out, firing.firing);
  out->append(",\"piece\":");
  AppendInt(out, model.FirstPieceOf(firing));
  out->append(",\"step\":");
  AppendInt(out, model.StepOf(firing));
  out->append(",\"reads\":");
  AppendNameArray(out, plan, actor.inputs);
  out->append(",\"writes\":");
  AppendNameArray(out, plan, actor.outputs);
  out->append(",\"queued_us\":");
  AppendMicros(out, std::max<TimeNs>(0, slice.start - firing.launch));
  out->append(",\"cause\":");
  AppendJsonString(out, CauseText(plan, firing.cause));
  out->append(",\"cause_kind\":");
  AppendJsonString(out, CauseKindName(firing.cause.kind));
  out->append(",\"cause_actor\":");
  AppendInt(out, firing.cause.actor);
  out->append(",\"cause_register\":");
  AppendInt(out, firing.cause.register_id);
  out->append(",\"cause_sequence\":");
  AppendInt(out, firing.cause.sequence);
  out->append("}},\n");
}

void AppendWait(std::string* out, const TraceModel& model, const WaitRecord& wait,
                const Slice& slice) {
  const PlanFacts& plan = model.plan;
  out->append("{\"name\":\"");
  out->append(WaitKindName(wait.kind));
  out->append("\",\"cat\":\"wait\",\"ph\":\"X\",\"pid\":");
  AppendInt(out, slice.pid);
  out->append(",\"tid\":");
  AppendInt(out, slice.tid);
  out->append(",\"ts\":");
  AppendMicros(out, slice.start);
  out->append(",\"dur\":");
  AppendMicros(out, slice.end - slice.start);
  out->append(",\"args\":{\"actor\":");
  AppendInt(out, wait.actor);
  out->append(",\"firing\":");
  AppendInt(out, wait.firing);
  out->append(",\"register\":");
  AppendJsonString(out, wait.register_id >= 0
                            ? plan.registers[static_cast<size_t>(wait.register_id)].name
                            : std::string());
  out->append(",\"register_id\":");
  AppendInt(out, wait.register_id);
  out->append(",\"sequence\":");
  AppendInt(out, wait.sequence);
  out->append(",\"waiting_on\":");
  AppendIntArray(out, wait.waiting_on);
  out->append(",\"waiting_on_names\":");
  AppendJsonString(
      out, wait.kind == WaitKind::kQueued ? std::string() : ActorListText(plan, wait.waiting_on));
  out->append("}},\n");
}

}  // namespace

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

namespace {

std::vector<int32_t> IntList(const JsonValue* value) {
  std::vector<int32_t> list;
  if (value == nullptr || !value->is_array()) return list;
  for (const JsonValue& element : value->array()) {
    if (element.is_number()) list.push_back(static_cast<int32_t>(std::llround(element.number())));
  }
  return list;
}

const JsonValue* ArrayMember(const JsonValue& object, const std::string& key) {
  const JsonValue* value = object.Find(key);
  return value != nullptr && value->is_array() ? value : nullptr;
}

TimeNs Nanos(double micros) {
  return static_cast<TimeNs>(std::llround(micros * 1000.0));
}

}  // namespace

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

std::string ExportChromeTrace(const TraceModel& model) {
  const PlanFacts& plan = model.plan;
  std::vector<Slice> slices;
  const int64_t adjusted = model.adjusted_slices + LaySlices(model, &slices);
  std::vector<const Slice*> firing_slice(model.firings.size(), nullptr);
  for (const Slice& slice : slices) {
    if (slice.is_firing) firing_slice[slice.index] = &slice;
  }

  std::string out;
  out.reserve(256 * (slices.size() + model.counters.size() + 2 * model.flows.size()) + 4096);
  out.append("{\"displayTimeUnit\":\"ns\",\n");
  AppendOtherData(&out, model, adjusted);
  out.append("\"traceEvents\":[\n");

  // Names and order of the processes and threads.
  std::set<std::pair<int32_t, int32_t>> queues;
  for (const ActorFacts& actor : plan.actors) queues.insert({actor.device, actor.queue});
  for (size_t d = 0; d < plan.devices.size(); ++d) {
    const int pid = DevicePid(static_cast<int32_t>(d));
    AppendMetadata(&out, "process_name", pid, nullptr, "name", plan.devices[d].name, 0, false);
    AppendMetadata(&out, "process_sort_index", pid, nullptr, "sort_index", "",
                   static_cast<int64_t>(d), true);
  }
  for (const auto& [device, queue] : queues) {
    const int64_t tid = queue;
    AppendMetadata(&out, "thread_name", DevicePid(device), &tid, "name", QueueName(queue), 0,
                   false);
  }
  const int actors_pid = static_cast<int>(plan.devices.size()) + 1;
  AppendMetadata(&out, "process_name", actors_pid, nullptr, "name", "actors (waits)", 0, false);
  AppendMetadata(&out, "process_sort_index", actors_pid, nullptr, "sort_index", "",
                 static_cast<int64_t>(plan.devices.size()), true);
  for (size_t a = 0; a < plan.actors.size(); ++a) {
    const int64_t tid = static_cast<int64_t>(a);
    AppendMetadata(&out, "thread_name", actors_pid, &tid, "name", plan.actors[a].name, 0, false);
    AppendMetadata(&out, "thread_sort_index", actors_pid, &tid, "sort_index", "", tid, true);
  }

  for (const Slice& slice : slices) {
    if (slice.is_firing) {
      AppendFiring(&out, model, model.firings[slice.index], slice);
    } else {
      AppendWait(&out, model, model.waits[slice.index], slice);
    }
  }

  const std::vector<std::string> counter_names = CounterNames(plan);
  for (const CounterRecord& counter : model.counters) {
    const RegisterFacts& reg = plan.registers[static_cast<size_t>(counter.register_id)];
    out.append("{\"name\":");
    AppendJsonString(&out, counter_names[static_cast<size_t>(counter.register_id)]);
    out.append(",\"cat\":\"slots\",\"ph\":\"C\",\"pid\":");
    AppendInt(&out, DevicePid(reg.device));
    out.append(",\"ts\":");
    AppendMicros(&out, counter.time);
    out.append(",\"args\":{\"occupied\":");
    AppendInt(&out, counter.occupied);
    out.append("}},\n");
  }

  // Flow ends: a firing's record index, by (actor, firing).
  std::map<std::pair<int32_t, int64_t>, size_t> firing_index;
  for (size_t i = 0; i < model.firings.size(); ++i) {
    firing_index[{model.firings[i].actor, model.firings[i].firing}] = i;
  }
  int64_t flow_id = 0;
  for (const FlowRecord& flow : model.flows) {
    auto from = firing_index.find({flow.producer, flow.producer_firing});
    auto to = firing_index.find({flow.consumer, flow.consumer_firing});
    if (from == firing_index.end() || to == firing_index.end()) continue;
    const Slice& source = *firing_slice[from->second];
    const Slice& target = *firing_slice[to->second];
    ++flow_id;
    // Just inside both slices: the end of the producer's, the start of the consumer's.
    const TimeNs begin = std::max(source.start, source.end - 1);
    const TimeNs finish = std::min(target.end, target.start + 1);
    out.append("{\"name\":");
    AppendJsonString(&out, plan.registers[static_cast<size_t>(flow.register_id)].name);
    out.append(",\"cat\":\"fill\",\"ph\":\"s\",\"id\":");
    AppendInt(&out, flow_id);
    out.append(",\"pid\":");
    AppendInt(&out, source.pid);
    out.append(",\"tid\":");
    AppendInt(&out, source.tid);
    out.append(",\"ts\":");
    AppendMicros(&out, begin);
    out.append(",\"args\":{\"register_id\":");
    AppendInt(&out, flow.register_id);
    out.append(",\"sequence\":");
    AppendInt(&out, flow.sequence);
    out.append(",\"producer\":");
    AppendInt(&out, flow.producer);
    out.append(",\"producer_firing\":");
    AppendInt(&out, flow.producer_firing);
    out.append(",\"consumer\":");
    AppendInt(&out, flow.consumer);
    out.append(",\"consumer_firing\":");
    AppendInt(&out, flow.consumer_firing);
    out.append(",\"sent_us\":");
    AppendMicros(&out, flow.sent);
    out.append("}},\n{\"name\":");
    AppendJsonString(&out, plan.registers[static_cast<size_t>(flow.register_id)].name);
    out.append(",\"cat\":\"fill\",\"ph\":\"f\",\"bp\":\"e\",\"id\":");
    AppendInt(&out, flow_id);
    out.append(",\"pid\":");
    AppendInt(&out, target.pid);
    out.append(",\"tid\":");
    AppendInt(&out, target.tid);
    out.append(",\"ts\":");
    AppendMicros(&out, finish);
    out.append("},\n");
  }
  // Every event above ends in ",\n"; the last one must not.
  if (out.size() >= 2 && out.compare(out.size() - 2, 2, ",\n") == 0) out.resize(out.size() - 2);
  out.append("\n]}\n");
  return out;
}

Status WriteChromeTrace(const std::string& path, const TraceModel& model) {
  return WriteFileAtomically(path, ExportChromeTrace(model));
}

namespace {

// Reads the events of one file into a model; the plan's facts arrive with otherData, which
// may come before or after the events, so names are resolved at the end.
class TraceFileReader {
 public:
  Status OnEvent(const JsonValue& event) {
    if (!event.is_object()) return DataLossError("a trace event is not an object");
    const std::string phase = event.StringOr("ph", "");
    const JsonValue* args = event.Find("args");
    if (phase == "X") {
      if (args == nullptr || !args->is_object()) return DataLossError("an X event has no args");
      const JsonValue* ts = event.Find("ts");
      const JsonValue* dur = event.Find("dur");
      if (ts == nullptr || !ts->is_number() || dur == nullptr || !dur->is_number()) {
        return DataLossError("an X event lacks ts or dur");
      }
      if (dur->number() < 0) return DataLossError("an X event has a negative dur");
      const TimeNs start = Nanos(ts->number());
      const TimeNs end = start + Nanos(dur->number());
      if (event.StringOr("cat", "") == "wait") {
        WaitRecord wait;
        wait.actor = static_cast<int32_t>(args->IntOr("actor", -1));
        wait.firing = args->IntOr("firing", 0);
        const std::string name = event.StringOr("name", "");
        if (name == "starved") {
          wait.kind = WaitKind::kStarved;
        } else if (name == "blocked") {
          wait.kind = WaitKind::kBlocked;
        } else if (name == "queued") {
          wait.kind = WaitKind::kQueued;
        } else {
          return DataLossError("unknown wait '" + name + "'");
        }
        wait.register_id = static_cast<int32_t>(args->IntOr("register_id", -1));
        wait.sequence = args->IntOr("sequence", -1);
        wait.waiting_on = IntList(args->Find("waiting_on"));
        wait.start = start;
        wait.end = end;
        model_.waits.push_back(std::move(wait));
      } else {
        FiringRecord firing;
        firing.actor = static_cast<int32_t>(args->IntOr("actor", -1));
        firing.firing = args->IntOr("firing", -1);
        if (firing.actor < 0 || firing.firing < 0) {
          return DataLossError("a firing lacks its actor or firing number");
        }
        firing.start = start;
        firing.end = end;
        firing.launch = start - Nanos(args->NumberOr("queued_us", 0));
        const std::string cause = args->StringOr("cause_kind", "unknown");
        firing.cause.kind = cause == "start"             ? CauseKind::kStart
                            : cause == "input"           ? CauseKind::kInput
                            : cause == "slot"            ? CauseKind::kSlot
                            : cause == "previous firing" ? CauseKind::kPreviousFiring
                                                         : CauseKind::kNone;
        firing.cause.actor = static_cast<int32_t>(args->IntOr("cause_actor", -1));
        firing.cause.register_id = static_cast<int32_t>(args->IntOr("cause_register", -1));
        firing.cause.sequence = args->IntOr("cause_sequence", -1);
        model_.firings.push_back(firing);
      }
    } else if (phase == "C") {
      if (args == nullptr || !args->is_object()) return DataLossError("a C event has no args");
      counters_.push_back({event.StringOr("name", ""), Nanos(event.NumberOr("ts", 0)),
                           static_cast<int32_t>(args->IntOr("occupied", 0))});
    } else if (phase == "s") {
      if (args == nullptr || !args->is_object()) return DataLossError("a flow has no args");
      FlowRecord flow;
      flow.register_id = static_cast<int32_t>(args->IntOr("register_id", -1));
      flow.sequence = args->IntOr("sequence", 0);
      flow.producer = static_cast<int32_t>(args->IntOr("producer", -1));
      flow.producer_firing = args->IntOr("producer_firing", 0);
      flow.consumer = static_cast<int32_t>(args->IntOr("consumer", -1));
      flow.consumer_firing = args->IntOr("consumer_firing", 0);
      flow.sent = Nanos(args->NumberOr("sent_us", 0));
      model_.flows.push_back(flow);
    }
    return Status::Ok();
  }

  StatusOr<TraceModel> Finish(const JsonValue& top) {
    const JsonValue* other = top.Find("otherData");
    if (other == nullptr || !other->is_object() || other->StringOr("format", "") != kFormat) {
      return DataLossError(std::string("not a softwire trace (otherData.format is not \"") +
                           kFormat + "\")");
    }
    const JsonValue* plan = other->Find("plan");
    if (plan == nullptr) return DataLossError("otherData has no plan");
    SOFTWIRE_ASSIGN_OR_RETURN(model_.plan, PlanFactsFromJson(*plan));
    RecordingInfo& info = model_.info;
    info.engine = other->StringOr("engine", "");
    info.clock = other->StringOr("clock", "");
    info.origin_ns = other->IntOr("origin_ns", 0);
    info.event_cap = other->IntOr("event_cap", 0);
    info.events_recorded = other->IntOr("events_recorded", 0);
    info.events_dropped = other->IntOr("events_dropped", 0);
    info.outcome = other->StringOr("outcome", "");
    const std::string window = other->StringOr("step_window", "all");
    if (window != "all") {
      StatusOr<StepWindow> parsed = ParseStepWindow(window);
      if (!parsed.ok()) return DataLossError("otherData.step_window: " + parsed.status().message());
      info.window = *parsed;
    }
    if (const JsonValue* offsets = ArrayMember(*other, "clock_offsets")) {
      for (const JsonValue& offset : offsets->array()) {
        info.clock_offsets.push_back(NodeClockOffset{offset.StringOr("node", ""),
                                                     offset.IntOr("offset_ns", 0),
                                                     offset.IntOr("error_ns", 0)});
      }
    }
    model_.adjusted_slices = other->IntOr("adjusted_slices", 0);
    SOFTWIRE_RETURN_IF_ERROR(ResolveAndCheck());
    return std::move(model_);
  }

 private:
  Status ResolveAndCheck() {
    const PlanFacts& plan = model_.plan;
    const int32_t actors = static_cast<int32_t>(plan.actors.size());
    const int32_t registers = static_cast<int32_t>(plan.registers.size());
    for (const FiringRecord& firing : model_.firings) {
      if (firing.actor >= actors) {
        return DataLossError("a firing names actor " + std::to_string(firing.actor) +
                             ", but the plan has " + std::to_string(actors) + " actors");
      }
    }
    for (const WaitRecord& wait : model_.waits) {
      if (wait.actor < 0 || wait.actor >= actors || wait.register_id >= registers) {
        return DataLossError("a wait names an actor or register the plan does not have");
      }
    }
    for (const FlowRecord& flow : model_.flows) {
      if (flow.producer < 0 || flow.producer >= actors || flow.consumer < 0 ||
          flow.consumer >= actors || flow.register_id < 0 || flow.register_id >= registers) {
        return DataLossError("a flow names an actor or register the plan does not have");
      }
    }
    const std::vector<std::string> names = CounterNames(plan);
    std::map<std::string, int32_t> by_name;
    for (size_t i = 0; i < names.size(); ++i) by_name[names[i]] = static_cast<int32_t>(i);
    for (const auto& counter : counters_) {
      auto found = by_name.find(counter.name);
      if (found == by_name.end()) {
        return DataLossError("counter '" + counter.name + "' names no register of the plan");
      }
      model_.counters.push_back(CounterRecord{found->second, counter.time, counter.occupied});
    }
    std::sort(model_.firings.begin(), model_.firings.end(),
              [](const FiringRecord& a, const FiringRecord& b) {
                if (a.start != b.start) return a.start < b.start;
                return a.actor != b.actor ? a.actor < b.actor : a.firing < b.firing;
              });
    std::stable_sort(model_.waits.begin(), model_.waits.end(),
                     [](const WaitRecord& a, const WaitRecord& b) {
                       return a.actor != b.actor ? a.actor < b.actor : a.start < b.start;
                     });
    std::stable_sort(
        model_.counters.begin(), model_.counters.end(),
        [](const CounterRecord& a, const CounterRecord& b) { return a.time < b.time; });
    std::stable_sort(model_.flows.begin(), model_.flows.end(),
                     [](const FlowRecord& a, const FlowRecord& b) { return a.sent < b.sent; });
    return Status::Ok();
  }

  struct NamedCounter {
    std::string name;
    TimeNs time;
    int32_t occupied;
  };
  TraceModel model_;
  std::vector<NamedCounter> counters_;
};

}  // namespace

StatusOr<TraceModel> ParseChromeTrace(const std::string& text, const std::string& source) {
  TraceFileReader reader;
  StatusOr<JsonValue> top = ParseJsonStreaming(
      text, "traceEvents", [&reader](const JsonValue& event) { return reader.OnEvent(event); });
  if (!top.ok()) return DataLossError(source + ": " + top.status().message());
  StatusOr<TraceModel> model = reader.Finish(*top);
  if (!model.ok()) return DataLossError(source + ": " + model.status().message());
  return model;
}

StatusOr<TraceModel> ReadChromeTrace(const std::string& path) {
  StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return ParseChromeTrace(*text, path);
}

}  // namespace trace
}  // namespace softwire
