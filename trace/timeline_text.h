// Text in the trace pictures: how wide a line prints, and where labels go so that none
// overlaps another.
//
// Widths are estimated from DejaVu Sans's advance widths (Debian's default sans-serif, what
// chromium and rsvg-convert print `font-family="sans-serif"` with), rounded up, so a box holds
// its text in that font and in narrower ones (Liberation Sans, Arial). The renderer places every
// text through these boxes, and the tests check the boxes of whole pictures for overlaps.
// Pure functions; no state.
#ifndef SOFTWIRE_TRACE_TIMELINE_TEXT_H_
#define SOFTWIRE_TRACE_TIMELINE_TEXT_H_

#include <functional>
#include <string>
#include <vector>

namespace softwire {
namespace trace {

enum class TextAnchor { kStart, kMiddle, kEnd };  // SVG's text-anchor.

// Where a text prints: its box (top-left corner, size) in the picture's pixels.
struct TextBox {
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;
  std::string text;
};

// The printed width of `text` (UTF-8) at `font_size` pixels; bold prints wider.
double TextWidth(const std::string& text, double font_size, bool bold = false);

// The box of `text` drawn at (x, baseline) with `anchor`.
TextBox BoxOf(double x, double baseline, const std::string& text, double font_size,
              TextAnchor anchor, bool bold = false);

// Whether two boxes overlap by more than half a pixel both ways (boxes that touch do not).
bool Overlaps(const TextBox& a, const TextBox& b);

// `text` cut to print within `width` pixels, ending in "..." when cut; "" when not even that
// fits. `keep_end` cuts from the front instead ("...de/cpu:3"), for names whose end tells them
// apart.
std::string FitText(const std::string& text, double font_size, double width, bool keep_end = false);

// Labels at positions along a line (step labels along the top of the plot): each wants to start
// at its x. A label that would start before the previous one ends (plus `gap`) joins the
// previous group, and a group prints one label for all of it. `name(first, last)` names a group
// of labels [first, last]; every label is named by exactly one group. The last group is moved
// left so it ends by `right` (joining the one before when it then would overlap). Returns the
// groups' (x, text), left to right.
struct PlacedLabel {
  double x = 0;
  std::string text;
};
std::vector<PlacedLabel> GroupLabels(const std::vector<double>& xs,
                                     const std::function<std::string(size_t, size_t)>& name,
                                     double font_size, double gap, double right);

}  // namespace trace
}  // namespace softwire

#endif  // SOFTWIRE_TRACE_TIMELINE_TEXT_H_
