#include "service/web/timeline_json.h"

#include <unordered_map>
#include <vector>

#include "trace/timeline_render.h"  // KindColor

namespace softwire {
namespace service {
namespace {

bool ParseCount(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 15) return false;
  int64_t parsed = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    parsed = parsed * 10 + (c - '0');
  }
  *value = parsed;
  return true;
}

uint64_t FiringKey(int32_t actor, int64_t firing) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(actor)) << 40) ^
         static_cast<uint64_t>(firing);
}

nlohmann::json PlanJson(const trace::TraceModel& model, const trace::TraceSummary& summary) {
  nlohmann::json devices = nlohmann::json::array();
  for (size_t i = 0; i < model.plan.devices.size(); ++i) {
    const trace::DeviceFacts& device = model.plan.devices[i];
    nlohmann::json entry = {
        {"name", device.name}, {"kind", device.kind}, {"planned_bytes", device.planned_bytes}};
    if (i < summary.devices.size()) {
      entry["utilization"] = summary.devices[i].utilization;
      entry["steady_utilization"] = summary.devices[i].steady_utilization;
    }
    if (i < summary.memory.size()) entry["high_water_bytes"] = summary.memory[i].high_water;
    devices.push_back(entry);
  }
  nlohmann::json actors = nlohmann::json::array();
  for (size_t i = 0; i < model.plan.actors.size(); ++i) {
    const trace::ActorFacts& actor = model.plan.actors[i];
    nlohmann::json entry = {{"name", actor.name},
                            {"kind", actor.kind},
                            {"op_type", actor.op_type},
                            {"device", actor.device},
                            {"queue", actor.queue},
                            {"stage", actor.stage},
                            {"color", trace::KindColor(actor.kind)}};
    if (i < summary.actors.size()) {
      const trace::ActorUsage& usage = summary.actors[i];
      entry["busy"] = usage.busy;
      entry["starved"] = usage.starved;
      entry["blocked"] = usage.blocked;
      entry["queued"] = usage.queued;
    }
    actors.push_back(entry);
  }
  nlohmann::json registers = nlohmann::json::array();
  for (const trace::RegisterFacts& reg : model.plan.registers) registers.push_back(reg.name);
  return {{"devices", devices}, {"actors", actors}, {"registers", registers}};
}

nlohmann::json SummaryJson(const trace::TraceModel& model, const trace::TraceSummary& summary) {
  const bool has_bottleneck = summary.bottleneck >= 0 &&
                              summary.bottleneck < static_cast<int32_t>(model.plan.actors.size());
  return {{"span_seconds", summary.span_seconds},
          {"firings", summary.firings},
          {"first_step", summary.first_step},
          {"end_step", summary.end_step},
          {"stages", summary.stages},
          {"pieces_per_step", summary.pieces_per_step},
          {"bubble_formula", summary.bubble_formula},
          {"bubble_measured", summary.bubble_measured},
          {"path_seconds", summary.path_seconds},
          {"path_busy_seconds", summary.path_busy_seconds},
          {"bottleneck", has_bottleneck ? model.plan.actors[summary.bottleneck].name : ""},
          {"bottleneck_seconds", summary.bottleneck_seconds}};
}

}  // namespace

StatusOr<TimelineSteps> ParseTimelineSteps(const std::string& text) {
  TimelineSteps steps;
  if (text.empty()) return steps;
  const size_t colon = text.find(':');
  const bool ok = colon == std::string::npos ? ParseCount(text, &steps.first)
                                             : ParseCount(text.substr(0, colon), &steps.first) &&
                                                   ParseCount(text.substr(colon + 1), &steps.end);
  if (!ok) return InvalidArgumentError("steps '" + text + "': expected A:B or A (step numbers)");
  if (colon == std::string::npos) steps.end = steps.first + 1;
  if (steps.end <= steps.first) {
    return InvalidArgumentError("steps '" + text + "': the end must come after the first step");
  }
  return steps;
}

nlohmann::json TimelineJson(const trace::TraceModel& model, const trace::TraceSummary& summary,
                            const TimelineSteps& steps) {
  const bool all_steps = steps.end <= steps.first;
  const trace::TimeNs origin = model.span_begin();
  // Firings of the chosen steps, in the model's order (by start), and where each landed.
  std::vector<size_t> chosen;
  std::vector<int64_t> position_of(model.firings.size(), -1);
  std::unordered_map<uint64_t, int64_t> position_by_key;
  for (size_t i = 0; i < model.firings.size(); ++i) {
    const trace::FiringRecord& firing = model.firings[i];
    const int64_t step = model.StepOf(firing);
    if (!all_steps && (step < steps.first || step >= steps.end)) continue;
    position_of[i] = static_cast<int64_t>(chosen.size());
    position_by_key[FiringKey(firing.actor, firing.firing)] = static_cast<int64_t>(chosen.size());
    chosen.push_back(i);
  }
  nlohmann::json actor = nlohmann::json::array(), index = nlohmann::json::array(),
                 step = nlohmann::json::array(), launch = nlohmann::json::array(),
                 start = nlohmann::json::array(), end = nlohmann::json::array(),
                 cause_kind = nlohmann::json::array(), cause_actor = nlohmann::json::array(),
                 cause_register = nlohmann::json::array();
  for (size_t i : chosen) {
    const trace::FiringRecord& firing = model.firings[i];
    actor.push_back(firing.actor);
    index.push_back(firing.firing);
    step.push_back(model.StepOf(firing));
    launch.push_back(firing.launch - origin);
    start.push_back(firing.start - origin);
    end.push_back(firing.end - origin);
    cause_kind.push_back(trace::CauseKindName(firing.cause.kind));
    cause_actor.push_back(firing.cause.actor);
    cause_register.push_back(firing.cause.register_id);
  }
  nlohmann::json flow_from = nlohmann::json::array(), flow_to = nlohmann::json::array(),
                 flow_register = nlohmann::json::array();
  for (const trace::FlowRecord& flow : model.flows) {
    auto producer = position_by_key.find(FiringKey(flow.producer, flow.producer_firing));
    auto consumer = position_by_key.find(FiringKey(flow.consumer, flow.consumer_firing));
    if (producer == position_by_key.end() || consumer == position_by_key.end()) continue;
    flow_from.push_back(producer->second);
    flow_to.push_back(consumer->second);
    flow_register.push_back(flow.register_id);
  }
  nlohmann::json critical = nlohmann::json::array();
  for (size_t i : summary.critical_path) {
    if (i < position_of.size() && position_of[i] >= 0) critical.push_back(position_of[i]);
  }
  nlohmann::json json = PlanJson(model, summary);
  json["job_name"] = model.plan.job_name;
  json["span_ns"] = model.span_end() - origin;
  json["steps"] = {{"first", all_steps ? summary.first_step : steps.first},
                   {"end", all_steps ? summary.end_step : steps.end}};
  json["total_firings"] = model.firings.size();
  json["firings"] = {{"actor", actor},
                     {"firing", index},
                     {"step", step},
                     {"launch", launch},
                     {"start", start},
                     {"end", end},
                     {"cause", cause_kind},
                     {"cause_actor", cause_actor},
                     {"cause_register", cause_register}};
  json["flows"] = {{"from", flow_from}, {"to", flow_to}, {"register", flow_register}};
  json["critical_path"] = critical;
  json["summary"] = SummaryJson(model, summary);
  return json;
}

}  // namespace service
}  // namespace softwire
