// TimelineJson: a job's actor trace as the timeline page draws it (docs/WEB.md, "Timeline"):
// the plan's devices and actors, the firings of the chosen steps as columns (one array per
// field, so 100,000 firings parse in milliseconds in a browser), the flows between them, the
// critical path, and the summary's utilization, bubble and memory beside.
//
//   StatusOr<trace::TraceModel> model = trace::ReadChromeTrace(results.trace_path);
//   nlohmann::json timeline = TimelineJson(*model, trace::Summarize(*model), {2, 4});
//
// Times are integer nanoseconds from the start of the trace's span. Firing columns are sorted
// by start; "flows" and "critical_path" index into them. Threading: pure.
#ifndef SOFTWIRE_SERVICE_WEB_TIMELINE_JSON_H_
#define SOFTWIRE_SERVICE_WEB_TIMELINE_JSON_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "trace/trace_model.h"
#include "trace/trace_summary.h"

namespace softwire {
namespace service {

// Steps [first, end) of a trace; end <= first: every recorded step.
struct TimelineSteps {
  int64_t first = 0;
  int64_t end = 0;
};

// "A:B" (steps A to B-1), "A" (step A alone) or "" (all) as TimelineSteps; InvalidArgument
// naming the text otherwise.
StatusOr<TimelineSteps> ParseTimelineSteps(const std::string& text);

nlohmann::json TimelineJson(const trace::TraceModel& model, const trace::TraceSummary& summary,
                            const TimelineSteps& steps);

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_WEB_TIMELINE_JSON_H_
