#include "trace/timeline_text.h"

#include <algorithm>
#include <cstdint>

namespace softwire {
namespace trace {
namespace {

// DejaVu Sans advance widths in em (units of 2048, rounded up to the next hundredth), for the
// printable ASCII characters from ' ' (32) to '~' (126).
constexpr double kAsciiWidths[95] = {
    0.32, 0.41, 0.47, 0.84, 0.64, 0.96, 0.78, 0.28, 0.40, 0.40,  //  !"#$%&'()
    0.50, 0.84, 0.32, 0.37, 0.32, 0.34, 0.64, 0.64, 0.64, 0.64,  // *+,-./0123
    0.64, 0.64, 0.64, 0.64, 0.64, 0.64, 0.34, 0.34, 0.84, 0.84,  // 456789:;<=
    0.84, 0.54, 1.00, 0.69, 0.69, 0.70, 0.78, 0.64, 0.58, 0.78,  // >?@ABCDEFG
    0.76, 0.30, 0.30, 0.66, 0.56, 0.87, 0.75, 0.79, 0.61, 0.79,  // HIJKLMNOPQ
    0.70, 0.64, 0.62, 0.74, 0.69, 0.99, 0.69, 0.62, 0.69, 0.40,  // RSTUVWXYZ[
    0.34, 0.40, 0.84, 0.50, 0.50, 0.62, 0.64, 0.55, 0.64, 0.62,  // \]^_`abcde
    0.36, 0.64, 0.64, 0.28, 0.28, 0.58, 0.28, 0.98, 0.64, 0.62,  // fghijklmno
    0.64, 0.64, 0.42, 0.53, 0.40, 0.64, 0.60, 0.82, 0.60, 0.60,  // pqrstuvwxy
    0.53, 0.64, 0.34, 0.64, 0.84};                               // z{|}~

constexpr double kAscent = 0.93;   // Of the em, above the baseline.
constexpr double kDescent = 0.24;  // Below it.
constexpr double kBoldWidening = 1.12;
constexpr const char* kEllipsis = "...";

double CharWidth(unsigned char c) {
  if (c >= 32 && c < 127) return kAsciiWidths[c - 32];
  if ((c & 0xC0) == 0x80) return 0;  // A UTF-8 continuation byte: counted with its lead.
  return 1.0;                        // Anything else: as wide as the em.
}

}  // namespace

double TextWidth(const std::string& text, double font_size, bool bold) {
  double ems = 0;
  for (char c : text) ems += CharWidth(static_cast<unsigned char>(c));
  return ems * font_size * (bold ? kBoldWidening : 1.0);
}

TextBox BoxOf(double x, double baseline, const std::string& text, double font_size,
              TextAnchor anchor, bool bold) {
  TextBox box;
  box.text = text;
  box.width = TextWidth(text, font_size, bold);
  box.height = (kAscent + kDescent) * font_size;
  box.y = baseline - kAscent * font_size;
  switch (anchor) {
    case TextAnchor::kStart:
      box.x = x;
      break;
    case TextAnchor::kMiddle:
      box.x = x - box.width / 2;
      break;
    case TextAnchor::kEnd:
      box.x = x - box.width;
      break;
  }
  return box;
}

bool Overlaps(const TextBox& a, const TextBox& b) {
  const double dx = std::min(a.x + a.width, b.x + b.width) - std::max(a.x, b.x);
  const double dy = std::min(a.y + a.height, b.y + b.height) - std::max(a.y, b.y);
  return dx > 0.5 && dy > 0.5;
}

std::string FitText(const std::string& text, double font_size, double width, bool keep_end) {
  if (TextWidth(text, font_size) <= width) return text;
  const double room = width - TextWidth(kEllipsis, font_size);
  if (room < 0) return "";
  // Whole UTF-8 characters only: never cut before a continuation byte.
  auto is_boundary = [&](size_t at) {
    return at == 0 || at == text.size() || (static_cast<unsigned char>(text[at]) & 0xC0) != 0x80;
  };
  if (keep_end) {
    size_t from = text.size();
    double used = 0;
    while (from > 0) {
      size_t previous = from - 1;
      while (!is_boundary(previous)) --previous;
      const double extra = TextWidth(text.substr(previous, from - previous), font_size);
      if (used + extra > room) break;
      used += extra;
      from = previous;
    }
    return kEllipsis + text.substr(from);
  }
  size_t to = 0;
  double used = 0;
  while (to < text.size()) {
    size_t next = to + 1;
    while (!is_boundary(next)) ++next;
    const double extra = TextWidth(text.substr(to, next - to), font_size);
    if (used + extra > room) break;
    used += extra;
    to = next;
  }
  return text.substr(0, to) + kEllipsis;
}

std::vector<PlacedLabel> GroupLabels(const std::vector<double>& xs,
                                     const std::function<std::string(size_t, size_t)>& name,
                                     double font_size, double gap, double right) {
  struct Group {
    size_t first;
    size_t last;
    double x;
  };
  std::vector<Group> groups;
  auto end_of = [&](const Group& group) {
    return group.x + TextWidth(name(group.first, group.last), font_size);
  };
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!groups.empty()) {
      Group widened = groups.back();
      widened.last = i;
      // Joins when it would start before the group, widened to take it, ends.
      if (xs[i] < end_of(widened) + gap) {
        groups.back() = widened;
        continue;
      }
    }
    groups.push_back(Group{i, i, xs[i]});
  }
  // The last group ends by `right`; moved left, it may meet the one before: they join.
  while (!groups.empty()) {
    Group& last = groups.back();
    last.x = std::min(last.x, right - TextWidth(name(last.first, last.last), font_size));
    if (groups.size() < 2) break;
    const Group& before = groups[groups.size() - 2];
    if (end_of(before) + gap <= last.x) break;
    Group joined{before.first, last.last, before.x};
    groups.pop_back();
    groups.back() = joined;
  }
  std::vector<PlacedLabel> placed;
  for (const Group& group : groups) {
    placed.push_back(PlacedLabel{group.x, name(group.first, group.last)});
  }
  return placed;
}

}  // namespace trace
}  // namespace softwire
