#include "trace/chrome_trace_check.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "trace/json.h"

namespace softwire {
namespace trace {
namespace {

// Integer nanoseconds, so that "inside" and "nests" are exact comparisons.
int64_t Nanos(double micros) {
  return std::llround(micros * 1000.0);
}

struct Interval {
  int64_t start;
  int64_t end;
  size_t event;
};

struct FlowEnd {
  int64_t pid;
  int64_t tid;
  int64_t ts;
  size_t event;
};

std::string At(size_t event) {
  return "traceEvents[" + std::to_string(event) + "]";
}

// What the checks across events need: every thread's slices, every flow's ends by id.
struct TraceShape {
  std::map<std::pair<int64_t, int64_t>, std::vector<Interval>> threads;  // (pid, tid) -> slices.
  std::map<int64_t, std::vector<FlowEnd>> starts;
  std::map<int64_t, std::vector<FlowEnd>> finishes;
};

Status CheckCompleteEvent(const Json& event, size_t i, int64_t start, TraceShape* shape) {
  const Json* dur = Find(event, "dur");
  if (dur == nullptr || !dur->is_number()) {
    return FailedPreconditionError(At(i) + " is an X event without a numeric dur");
  }
  if (dur->get<double>() < 0) return FailedPreconditionError(At(i) + " has a negative dur");
  const int64_t pid = IntOr(event, "pid", 0);
  const int64_t tid = IntOr(event, "tid", 0);
  shape->threads[{pid, tid}].push_back(Interval{start, start + Nanos(dur->get<double>()), i});
  return Status::Ok();
}

Status CheckCounterEvent(const Json& event, size_t i) {
  const Json* args = Find(event, "args");
  if (args == nullptr || !args->is_object() || args->empty()) {
    return FailedPreconditionError(At(i) + " is a counter without args");
  }
  for (const Json& value : *args) {
    if (!value.is_number()) {
      return FailedPreconditionError(At(i) + " has a non-numeric counter value");
    }
  }
  return Status::Ok();
}

Status CheckFlowEvent(const Json& event, size_t i, const std::string& phase, int64_t ts,
                      TraceShape* shape) {
  const Json* id = Find(event, "id");
  if (id == nullptr || !(id->is_number() || id->is_string())) {
    return FailedPreconditionError(At(i) + " is a flow event without an id");
  }
  const int64_t key =
      id->is_number()
          ? IntOr(event, "id", 0)
          : static_cast<int64_t>(std::hash<std::string>()(id->get_ref<const std::string&>()));
  if (phase == "f" && StringOr(event, "bp", "") != "e") {
    return FailedPreconditionError(At(i) + " is a flow end not bound to its enclosing slice");
  }
  const FlowEnd end{IntOr(event, "pid", 0), IntOr(event, "tid", 0), ts, i};
  (phase == "s" ? shape->starts : shape->finishes)[key].push_back(end);
  return Status::Ok();
}

// Checks event `i` on its own, counts it, and records what the checks across events need.
Status CheckEvent(const Json& event, size_t i, TraceShape* shape, ChromeTraceCounts* counts) {
  if (!event.is_object()) return FailedPreconditionError(At(i) + " is not an object");
  const std::string phase = StringOr(event, "ph", "");
  if (phase.empty()) return FailedPreconditionError(At(i) + " has no ph");
  if (phase == "M") {
    ++counts->metadata_events;
    return Status::Ok();
  }
  const Json* ts = Find(event, "ts");
  if (ts == nullptr || !ts->is_number()) {
    return FailedPreconditionError(At(i) + " (" + phase + ") has no numeric ts");
  }
  if (phase == "X") {
    SOFTWIRE_RETURN_IF_ERROR(CheckCompleteEvent(event, i, Nanos(ts->get<double>()), shape));
    ++counts->complete_events;
  } else if (phase == "C") {
    SOFTWIRE_RETURN_IF_ERROR(CheckCounterEvent(event, i));
    ++counts->counter_events;
  } else if (phase == "s" || phase == "f") {
    SOFTWIRE_RETURN_IF_ERROR(CheckFlowEvent(event, i, phase, Nanos(ts->get<double>()), shape));
  }
  return Status::Ok();
}

// The slices of one thread either nest or are disjoint.
Status CheckSlicesNest(TraceShape* shape) {
  for (auto& [thread, intervals] : shape->threads) {
    std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    });
    std::vector<const Interval*> open;
    for (const Interval& interval : intervals) {
      while (!open.empty() && open.back()->end <= interval.start) open.pop_back();
      if (!open.empty() && interval.end > open.back()->end) {
        return FailedPreconditionError(At(interval.event) + " overlaps " + At(open.back()->event) +
                                       " on pid " + std::to_string(thread.first) + " tid " +
                                       std::to_string(thread.second) + " without nesting");
      }
      open.push_back(&interval);
    }
  }
  return Status::Ok();
}

bool InsideASlice(const TraceShape& shape, const FlowEnd& end) {
  auto found = shape.threads.find({end.pid, end.tid});
  if (found == shape.threads.end()) return false;
  return std::any_of(found->second.begin(), found->second.end(),
                     [&end](const Interval& x) { return x.start <= end.ts && end.ts <= x.end; });
}

// Every flow has one start and one end, each inside a slice of its thread, the end not before
// the start; counts the flows.
Status CheckFlows(const TraceShape& shape, ChromeTraceCounts* counts) {
  for (const auto& [id, list_of_starts] : shape.starts) {
    auto finish = shape.finishes.find(id);
    if (list_of_starts.size() != 1 || finish == shape.finishes.end() ||
        finish->second.size() != 1) {
      return FailedPreconditionError("flow " + std::to_string(id) +
                                     " does not have exactly one start and one end");
    }
    if (!InsideASlice(shape, list_of_starts[0])) {
      return FailedPreconditionError("the start of flow " + std::to_string(id) + " (" +
                                     At(list_of_starts[0].event) + ") lies in no slice");
    }
    if (!InsideASlice(shape, finish->second[0])) {
      return FailedPreconditionError("the end of flow " + std::to_string(id) + " (" +
                                     At(finish->second[0].event) + ") lies in no slice");
    }
    if (finish->second[0].ts < list_of_starts[0].ts) {
      return FailedPreconditionError("flow " + std::to_string(id) + " ends before it starts");
    }
    ++counts->flows;
  }
  for (const auto& [id, list_of_finishes] : shape.finishes) {
    if (shape.starts.find(id) == shape.starts.end()) {
      return FailedPreconditionError("flow " + std::to_string(id) + " has an end but no start");
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ChromeTraceCounts> CheckChromeTrace(const std::string& text) {
  StatusOr<Json> parsed = ParseJson(text);
  if (!parsed.ok()) return FailedPreconditionError("not JSON: " + parsed.status().message());
  const Json* events = Find(*parsed, "traceEvents");
  if (events == nullptr || !events->is_array()) {
    return FailedPreconditionError("no traceEvents array");
  }
  ChromeTraceCounts counts;
  TraceShape shape;
  const Json& list = *events;
  for (size_t i = 0; i < list.size(); ++i) {
    SOFTWIRE_RETURN_IF_ERROR(CheckEvent(list[i], i, &shape, &counts));
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckSlicesNest(&shape));
  SOFTWIRE_RETURN_IF_ERROR(CheckFlows(shape, &counts));
  return counts;
}

}  // namespace trace
}  // namespace softwire
