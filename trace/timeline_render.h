// Pictures of a trace: an SVG timeline and a self-contained HTML report.
//
// The timeline has one row per device queue, labelled with its busy share of the span, time
// left to right with a labelled axis, one rectangle per firing (the only <rect> elements in the
// picture) coloured by actor kind, a legend of the kinds, dashed lines where steps begin, the
// warm-up step (which the steady figures leave out) on a pale band, and firings on the critical
// path outlined in black. Idle time, the pipeline bubble included, shows as the row's grey
// background between firings. Above `max_firing_rects` firings, firings of one row closer than
// a pixel are drawn as one rectangle (its tooltip says how many).
//
// The HTML report holds the SVG inline and the summary's tables; it loads nothing else.
#ifndef SOFTWIRE_TRACE_TIMELINE_RENDER_H_
#define SOFTWIRE_TRACE_TIMELINE_RENDER_H_

#include <cstdint>
#include <string>

#include "trace/trace_model.h"
#include "trace/trace_summary.h"

namespace softwire {
namespace trace {

struct TimelineOptions {
  int width = 1200;  // Pixels, labels included.
  int row_height = 24;
  int64_t max_firing_rects = 50000;
};

// `summary` may be null (no critical path outline).
std::string RenderTimelineSvg(const TraceModel& model, const TraceSummary* summary,
                              const TimelineOptions& options = TimelineOptions());

std::string RenderHtmlReport(const TraceModel& model, const TraceSummary& summary);

// The fill colour of an actor kind ("compute" -> "#4e79a7").
const char* KindColor(const std::string& kind);

// Escapes &, <, >, " and ' for XML and HTML text and attributes.
std::string EscapeXml(const std::string& text);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_TIMELINE_RENDER_H_
