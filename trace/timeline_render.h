// Pictures of a trace: an SVG timeline and a self-contained HTML report.
//
// The timeline has a header (the job, the steady steps' idle time split into filling and
// draining and imbalance beside the formula, the warm-up step's apart, and the actors on the
// steady steps' critical path with their share of it), one row per device queue labelled with
// its busy share of the steady steps (of the span without a summary), time left to right with
// a labelled axis, one rectangle per firing (the only <rect> elements in the picture) coloured
// by actor kind, dashed lines where steps begin, the warm-up step (which the steady figures
// leave out) on a pale band, the critical path as a red line through its firings (outlined in
// red), and a legend wrapped to the width. Idle time, the pipeline bubble included, shows as
// the row's grey background between firings. Above `max_firing_rects` firings, firings of one
// row closer than a pixel are drawn as one rectangle (its tooltip says how many).
//
// No text overlaps another at any number of rows and steps: every text is placed by its box
// (timeline_text.h), names too long for the label column are cut ("...e/cpu:3 q0"), step labels
// that would meet are grouped ("steps 1-4"), tick labels without room are left out, and the
// legend wraps. TimelineTextBoxes returns those boxes, for tests.
//
// The HTML report holds the SVG inline and the summary's tables; it loads nothing else.
// Pure functions (timeline_svg.cc draws the SVG, timeline_render.cc the report).
#ifndef SOFTWIRE_TRACE_TIMELINE_RENDER_H_
#define SOFTWIRE_TRACE_TIMELINE_RENDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trace/timeline_text.h"
#include "trace/trace_model.h"
#include "trace/trace_summary.h"

namespace softwire {
namespace trace {

struct TimelineOptions {
  int width = 1200;     // Pixels, labels included.
  int row_height = 24;  // Lane labels shrink below 15.
  int64_t max_firing_rects = 50000;
};

// `summary` may be null (no critical path outline).
std::string RenderTimelineSvg(const TraceModel& model, const TraceSummary* summary,
                              const TimelineOptions& options = TimelineOptions());

// The boxes of every text RenderTimelineSvg places, and the picture's size (either may be null).
std::vector<TextBox> TimelineTextBoxes(const TraceModel& model, const TraceSummary* summary,
                                       const TimelineOptions& options, int* width, int* height);

std::string RenderHtmlReport(const TraceModel& model, const TraceSummary& summary);

// The fill colour of an actor kind ("compute" -> "#4e79a7").
const char* KindColor(const std::string& kind);

// Escapes &, <, >, " and ' for XML and HTML text and attributes.
std::string EscapeXml(const std::string& text);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_TIMELINE_RENDER_H_
