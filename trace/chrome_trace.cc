#include "trace/chrome_trace.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/file.h"
#include "plan/labels.h"
#include "trace/chrome_trace_format.h"
#include "trace/json.h"
#include "trace/plan_facts_json.h"

namespace softwire {
namespace trace {
namespace {

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

// "queue 0 (compute)"; on a cpu device, whose compute queue runs on its kernel threads, with
// their names: "queue 0 (compute, threads sw:cpu0/k*)" (its copy queues run on a CAF worker).
std::string QueueName(const DeviceFacts& device, int32_t queue) {
  std::string role = queue == 0 ? "compute" : "copy";
  if (queue == 0 && !device.kernel_threads.empty()) role += ", threads " + device.kernel_threads;
  return "queue " + std::to_string(queue) + " (" + role + ")";
}

// A cpu device's sends finish off its queue (runtime/device/cpu/strand_queue.h): a send's
// slice spans its bytes' transfer, which overlaps the kernels the strand runs meanwhile, so its
// slices get a track of their own beside the queue's, numbered from here.
constexpr int32_t kSendTrackBase = 100;

bool SendsOffQueue(const PlanFacts& plan, const ActorFacts& actor) {
  return actor.kind == "send" && plan.devices[static_cast<size_t>(actor.device)].kind == "cpu";
}

// The thread (tid) of an actor's firings on its device's process.
int32_t TrackOf(const PlanFacts& plan, const ActorFacts& actor) {
  return SendsOffQueue(plan, actor) ? kSendTrackBase + actor.queue : actor.queue;
}

std::string TrackName(const DeviceFacts& device, int32_t track) {
  if (track < kSendTrackBase) return QueueName(device, track);
  return "queue " + std::to_string(track - kSendTrackBase) + " sends in flight (bytes written " +
         "by the data plane)";
}

std::string ActorLabel(const PlanFacts& plan, int32_t id) {
  if (id < 0 || id >= static_cast<int32_t>(plan.actors.size())) {
    return "actor #" + std::to_string(id);
  }
  return plan::ActorLabel(plan.actors[static_cast<size_t>(id)].name);
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
    slices->push_back(Slice{DevicePid(actor.device), TrackOf(model.plan, actor), firing.start,
                            firing.end, true, i});
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

// `,"pid":P,"tid":T,"ts":X`: where and when an event sits, on its device queue's track.
void AppendTrackAndTime(std::string* out, int pid, int64_t tid, TimeNs time) {
  out->append(",\"pid\":");
  AppendInt(out, pid);
  out->append(",\"tid\":");
  AppendInt(out, tid);
  out->append(",\"ts\":");
  AppendMicros(out, time);
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
  out->append(",\"ph\":\"X\"");
  AppendTrackAndTime(out, slice.pid, slice.tid, slice.start);
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
  out->append("\",\"cat\":\"wait\",\"ph\":\"X\"");
  AppendTrackAndTime(out, slice.pid, slice.tid, slice.start);
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

// Names and order of the processes (devices, then the actors' waits) and their threads.
void AppendTrackNames(std::string* out, const PlanFacts& plan) {
  std::set<std::pair<int32_t, int32_t>> queues;
  for (const ActorFacts& actor : plan.actors) queues.insert({actor.device, TrackOf(plan, actor)});
  for (size_t d = 0; d < plan.devices.size(); ++d) {
    const int pid = DevicePid(static_cast<int32_t>(d));
    AppendMetadata(out, "process_name", pid, nullptr, "name", plan.devices[d].name, 0, false);
    AppendMetadata(out, "process_sort_index", pid, nullptr, "sort_index", "",
                   static_cast<int64_t>(d), true);
  }
  for (const auto& [device, queue] : queues) {
    const int64_t tid = queue;
    AppendMetadata(out, "thread_name", DevicePid(device), &tid, "name",
                   TrackName(plan.devices[static_cast<size_t>(device)], queue), 0, false);
  }
  const int actors_pid = static_cast<int>(plan.devices.size()) + 1;
  AppendMetadata(out, "process_name", actors_pid, nullptr, "name", "actors (waits)", 0, false);
  AppendMetadata(out, "process_sort_index", actors_pid, nullptr, "sort_index", "",
                 static_cast<int64_t>(plan.devices.size()), true);
  for (size_t a = 0; a < plan.actors.size(); ++a) {
    const int64_t tid = static_cast<int64_t>(a);
    AppendMetadata(out, "thread_name", actors_pid, &tid, "name", plan.actors[a].name, 0, false);
    AppendMetadata(out, "thread_sort_index", actors_pid, &tid, "sort_index", "", tid, true);
  }
}

// Slot occupancy of every register, one counter track per register on its device.
void AppendCounters(std::string* out, const TraceModel& model) {
  const PlanFacts& plan = model.plan;
  const std::vector<std::string> counter_names = CounterNames(plan);
  for (const CounterRecord& counter : model.counters) {
    const RegisterFacts& reg = plan.registers[static_cast<size_t>(counter.register_id)];
    out->append("{\"name\":");
    AppendJsonString(out, counter_names[static_cast<size_t>(counter.register_id)]);
    out->append(",\"cat\":\"slots\",\"ph\":\"C\",\"pid\":");
    AppendInt(out, DevicePid(reg.device));
    out->append(",\"ts\":");
    AppendMicros(out, counter.time);
    out->append(",\"args\":{\"occupied\":");
    AppendInt(out, counter.occupied);
    out->append("}},\n");
  }
}

// One flow's start ("s", with the fill's facts) and end ("f"), just inside both slices: the end
// of the producer's, the start of the consumer's.
void AppendFlow(std::string* out, const PlanFacts& plan, const FlowRecord& flow, int64_t flow_id,
                const Slice& source, const Slice& target) {
  const TimeNs begin = std::max(source.start, source.end - 1);
  const TimeNs finish = std::min(target.end, target.start + 1);
  out->append("{\"name\":");
  AppendJsonString(out, plan.registers[static_cast<size_t>(flow.register_id)].name);
  out->append(",\"cat\":\"fill\",\"ph\":\"s\",\"id\":");
  AppendInt(out, flow_id);
  AppendTrackAndTime(out, source.pid, source.tid, begin);
  out->append(",\"args\":{\"register_id\":");
  AppendInt(out, flow.register_id);
  out->append(",\"sequence\":");
  AppendInt(out, flow.sequence);
  out->append(",\"producer\":");
  AppendInt(out, flow.producer);
  out->append(",\"producer_firing\":");
  AppendInt(out, flow.producer_firing);
  out->append(",\"consumer\":");
  AppendInt(out, flow.consumer);
  out->append(",\"consumer_firing\":");
  AppendInt(out, flow.consumer_firing);
  out->append(",\"sent_us\":");
  AppendMicros(out, flow.sent);
  out->append("}},\n{\"name\":");
  AppendJsonString(out, plan.registers[static_cast<size_t>(flow.register_id)].name);
  out->append(",\"cat\":\"fill\",\"ph\":\"f\",\"bp\":\"e\",\"id\":");
  AppendInt(out, flow_id);
  AppendTrackAndTime(out, target.pid, target.tid, finish);
  out->append("},\n");
}

// Every flow whose producer and consumer firings were both recorded, numbered from 1.
void AppendFlows(std::string* out, const TraceModel& model, const std::vector<Slice>& slices) {
  std::vector<const Slice*> firing_slice(model.firings.size(), nullptr);
  for (const Slice& slice : slices) {
    if (slice.is_firing) firing_slice[slice.index] = &slice;
  }
  std::map<std::pair<int32_t, int64_t>, size_t> firing_index;  // (actor, firing) -> record.
  for (size_t i = 0; i < model.firings.size(); ++i) {
    firing_index[{model.firings[i].actor, model.firings[i].firing}] = i;
  }
  int64_t flow_id = 0;
  for (const FlowRecord& flow : model.flows) {
    auto from = firing_index.find({flow.producer, flow.producer_firing});
    auto to = firing_index.find({flow.consumer, flow.consumer_firing});
    if (from == firing_index.end() || to == firing_index.end()) continue;
    AppendFlow(out, model.plan, flow, ++flow_id, *firing_slice[from->second],
               *firing_slice[to->second]);
  }
}

}  // namespace

std::string ExportChromeTrace(const TraceModel& model) {
  std::vector<Slice> slices;
  const int64_t adjusted = model.adjusted_slices + LaySlices(model, &slices);
  std::string out;
  out.reserve(256 * (slices.size() + model.counters.size() + 2 * model.flows.size()) + 4096);
  out.append("{\"displayTimeUnit\":\"ns\",\n");
  AppendOtherData(&out, model, adjusted);
  out.append("\"traceEvents\":[\n");
  AppendTrackNames(&out, model.plan);
  for (const Slice& slice : slices) {
    if (slice.is_firing) {
      AppendFiring(&out, model, model.firings[slice.index], slice);
    } else {
      AppendWait(&out, model, model.waits[slice.index], slice);
    }
  }
  AppendCounters(&out, model);
  AppendFlows(&out, model, slices);
  // Every event above ends in ",\n"; the last one must not.
  if (out.size() >= 2 && out.compare(out.size() - 2, 2, ",\n") == 0) out.resize(out.size() - 2);
  out.append("\n]}\n");
  return out;
}

Status WriteChromeTrace(const std::string& path, const TraceModel& model) {
  return WriteFileAtomically(path, ExportChromeTrace(model));
}

}  // namespace trace
}  // namespace softwire
