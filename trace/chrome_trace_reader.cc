// Reading a Chrome trace file written by ExportChromeTrace back into its TraceModel.
#include <cmath>
#include <map>
#include <set>

#include "base/file.h"
#include "trace/chrome_trace.h"
#include "trace/chrome_trace_format.h"
#include "trace/json.h"
#include "trace/plan_facts_json.h"

namespace softwire {
namespace trace {
namespace {

// Reads the events of one file into a model; the plan's facts arrive with otherData, which
// may come before or after the events, so names are resolved at the end.
class TraceFileReader {
 public:
  Status OnEvent(const Json& event) {
    if (!event.is_object()) return DataLossError("a trace event is not an object");
    const std::string phase = StringOr(event, "ph", "");
    const Json* args = Find(event, "args");
    if (phase == "X") {
      if (args == nullptr || !args->is_object()) return DataLossError("an X event has no args");
      const Json* ts = Find(event, "ts");
      const Json* dur = Find(event, "dur");
      if (ts == nullptr || !ts->is_number() || dur == nullptr || !dur->is_number()) {
        return DataLossError("an X event lacks ts or dur");
      }
      if (dur->get<double>() < 0) return DataLossError("an X event has a negative dur");
      const TimeNs start = Nanos(ts->get<double>());
      const TimeNs end = start + Nanos(dur->get<double>());
      if (StringOr(event, "cat", "") == "wait") {
        WaitRecord wait;
        wait.actor = static_cast<int32_t>(IntOr(*args, "actor", -1));
        wait.firing = IntOr(*args, "firing", 0);
        const std::string name = StringOr(event, "name", "");
        if (name == "starved") {
          wait.kind = WaitKind::kStarved;
        } else if (name == "blocked") {
          wait.kind = WaitKind::kBlocked;
        } else if (name == "queued") {
          wait.kind = WaitKind::kQueued;
        } else {
          return DataLossError("unknown wait '" + name + "'");
        }
        wait.register_id = static_cast<int32_t>(IntOr(*args, "register_id", -1));
        wait.sequence = IntOr(*args, "sequence", -1);
        wait.waiting_on = IntList(Find(*args, "waiting_on"));
        wait.start = start;
        wait.end = end;
        model_.waits.push_back(std::move(wait));
      } else {
        FiringRecord firing;
        firing.actor = static_cast<int32_t>(IntOr(*args, "actor", -1));
        firing.firing = IntOr(*args, "firing", -1);
        if (firing.actor < 0 || firing.firing < 0) {
          return DataLossError("a firing lacks its actor or firing number");
        }
        firing.start = start;
        firing.end = end;
        firing.launch = start - Nanos(NumberOr(*args, "queued_us", 0));
        const std::string cause = StringOr(*args, "cause_kind", "unknown");
        firing.cause.kind = cause == "start"             ? CauseKind::kStart
                            : cause == "input"           ? CauseKind::kInput
                            : cause == "slot"            ? CauseKind::kSlot
                            : cause == "previous firing" ? CauseKind::kPreviousFiring
                                                         : CauseKind::kNone;
        firing.cause.actor = static_cast<int32_t>(IntOr(*args, "cause_actor", -1));
        firing.cause.register_id = static_cast<int32_t>(IntOr(*args, "cause_register", -1));
        firing.cause.sequence = IntOr(*args, "cause_sequence", -1);
        model_.firings.push_back(firing);
      }
    } else if (phase == "C") {
      if (args == nullptr || !args->is_object()) return DataLossError("a C event has no args");
      counters_.push_back({StringOr(event, "name", ""), Nanos(NumberOr(event, "ts", 0)),
                           static_cast<int32_t>(IntOr(*args, "occupied", 0))});
    } else if (phase == "s") {
      if (args == nullptr || !args->is_object()) return DataLossError("a flow has no args");
      FlowRecord flow;
      flow.register_id = static_cast<int32_t>(IntOr(*args, "register_id", -1));
      flow.sequence = IntOr(*args, "sequence", 0);
      flow.producer = static_cast<int32_t>(IntOr(*args, "producer", -1));
      flow.producer_firing = IntOr(*args, "producer_firing", 0);
      flow.consumer = static_cast<int32_t>(IntOr(*args, "consumer", -1));
      flow.consumer_firing = IntOr(*args, "consumer_firing", 0);
      flow.sent = Nanos(NumberOr(*args, "sent_us", 0));
      model_.flows.push_back(flow);
    }
    return Status::Ok();
  }

  StatusOr<TraceModel> Finish(const Json& top) {
    const Json* other = Find(top, "otherData");
    if (other == nullptr || !other->is_object() || StringOr(*other, "format", "") != kFormat) {
      return DataLossError(std::string("not a softwire trace (otherData.format is not \"") +
                           kFormat + "\")");
    }
    const Json* plan = Find(*other, "plan");
    if (plan == nullptr) return DataLossError("otherData has no plan");
    SOFTWIRE_ASSIGN_OR_RETURN(model_.plan, PlanFactsFromJson(*plan));
    RecordingInfo& info = model_.info;
    info.engine = StringOr(*other, "engine", "");
    info.clock = StringOr(*other, "clock", "");
    info.origin_ns = IntOr(*other, "origin_ns", 0);
    info.event_cap = IntOr(*other, "event_cap", 0);
    info.events_recorded = IntOr(*other, "events_recorded", 0);
    info.events_dropped = IntOr(*other, "events_dropped", 0);
    info.outcome = StringOr(*other, "outcome", "");
    const std::string window = StringOr(*other, "step_window", "all");
    if (window != "all") {
      StatusOr<StepWindow> parsed = ParseStepWindow(window);
      if (!parsed.ok()) return DataLossError("otherData.step_window: " + parsed.status().message());
      info.window = *parsed;
    }
    if (const Json* offsets = ArrayMember(*other, "clock_offsets")) {
      for (const Json& offset : *offsets) {
        info.clock_offsets.push_back(NodeClockOffset{StringOr(offset, "node", ""),
                                                     IntOr(offset, "offset_ns", 0),
                                                     IntOr(offset, "error_ns", 0)});
      }
    }
    model_.adjusted_slices = IntOr(*other, "adjusted_slices", 0);
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
  StatusOr<Json> top = ParseJsonStreaming(
      text, "traceEvents", [&reader](const Json& event) { return reader.OnEvent(event); });
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
