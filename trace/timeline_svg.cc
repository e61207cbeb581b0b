// RenderTimelineSvg and TimelineTextBoxes (timeline_render.h): the picture is laid out once,
// by TimelinePainter, which writes the SVG and notes the box of every text it places.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trace/timeline_render.h"
#include "trace/timeline_text.h"

namespace softwire {
namespace trace {
namespace {

constexpr int kMargin = 10;
constexpr int kRightMargin = 20;
constexpr int kMinLabelColumn = 120;
constexpr double kTitleSize = 15;
constexpr double kHeaderSize = 12;
constexpr double kHeaderLeading = 17;
constexpr double kStepLabelSize = 10;
constexpr double kAxisLabelSize = 11;
constexpr double kLegendSize = 12;
constexpr double kLegendLeading = 20;
constexpr const char* kWarmupColor = "#f6e7a8";
constexpr const char* kPathColor = "#d62728";
constexpr const char* kIdleColor = "#e4e4e4";

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", value);
  return text;
}

std::string Percent(double share) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f%%", 100 * share);
  return text;
}

// A tick step of 1, 2 or 5 times a power of ten giving about `target` ticks over `span`.
double TickStep(double span, int target) {
  const double raw = span / std::max(1, target);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= factor * power) return factor * power;
  }
  return 10 * power;
}

std::string TimeLabel(double seconds, double step) {
  char text[32];
  if (step >= 1) {
    std::snprintf(text, sizeof(text), "%.0f s", seconds);
  } else if (step >= 1e-3) {
    std::snprintf(text, sizeof(text), "%.*f ms", step >= 1e-2 ? 0 : 1, seconds * 1e3);
  } else {
    std::snprintf(text, sizeof(text), "%.*f us", step >= 1e-5 ? 0 : 1, seconds * 1e6);
  }
  return text;
}

std::string StepsText(int64_t first, int64_t end) {
  if (end - first <= 1) return "step " + std::to_string(first);
  return "steps " + std::to_string(first) + ".." + std::to_string(end - 1);
}

const char* AnchorName(TextAnchor anchor) {
  switch (anchor) {
    case TextAnchor::kStart:
      return "start";
    case TextAnchor::kMiddle:
      return "middle";
    case TextAnchor::kEnd:
      return "end";
  }
  return "start";
}

class TimelinePainter {
 public:
  TimelinePainter(const TraceModel& model, const TraceSummary* summary,
                  const TimelineOptions& options)
      : model_(model), plan_(model.plan), summary_(summary), options_(options) {}

  void Paint() {
    Rows();
    Columns();
    HeaderLines();
    StepStarts();
    TimeRange();
    Open();
    Header();
    RowBackgroundsAndLabels();
    WarmupBand();
    StepLines();
    Firings();
    CriticalPathLine();
    Axis();
    Legend();
    svg_ += "</svg>\n";
    // The height is known only now: the legend wraps.
    const std::string height = std::to_string(height_);
    ReplaceFirst("height=\"0\"", "height=\"" + height + "\"");
    ReplaceFirst("viewBox=\"0 0 " + std::to_string(width_) + " 0\"",
                 "viewBox=\"0 0 " + std::to_string(width_) + " " + height + "\"");
  }

  const std::string& svg() const { return svg_; }
  const std::vector<TextBox>& boxes() const { return boxes_; }
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  // Where each step began: the first firing of an actor that StepStartingActors names.
  void StepStarts() {
    const std::vector<bool> starts_step = StepStartingActors(plan_);
    for (const FiringRecord& firing : model_.firings) {
      if (!starts_step[static_cast<size_t>(firing.actor)]) continue;
      const int64_t step = model_.StepOf(firing);
      auto found = step_starts_.find(step);
      if (found == step_starts_.end() || firing.start < found->second) {
        step_starts_[step] = firing.start;
      }
    }
  }

  // The time shown: the span; but a window of a longer run (`--trace-steps A:B`) is shown from
  // its first step's start, a little before it. Before that, the steps that were not recorded
  // ran, beside the few firings of step A that ran ahead of them (fed by sources only): shown,
  // that stretch would look idle and push the recorded steps into a corner.
  void TimeRange() {
    begin_ = model_.span_begin();
    end_ = std::max(model_.span_end(), begin_ + 1);
    if (!model_.info.window.all() && !step_starts_.empty()) {
      const TimeNs first = step_starts_.begin()->second;
      const TimeNs margin = (end_ - first) / 100;
      if (first - margin > begin_) {
        begin_ = first - margin;
        cut_before_ = true;
      }
    }
    scale_ = plot_width_ / static_cast<double>(end_ - begin_);
  }

  // Rows: every (device, queue) some actor uses, in plan order.
  void Rows() {
    std::set<std::pair<int32_t, int32_t>> queue_set;
    for (const ActorFacts& actor : plan_.actors) queue_set.insert({actor.device, actor.queue});
    rows_.assign(queue_set.begin(), queue_set.end());
    for (size_t i = 0; i < rows_.size(); ++i) row_of_[rows_[i]] = static_cast<int>(i);
    row_height_ = std::max(8, options_.row_height);
    // Lane labels as large as the rows allow, up to the header's size.
    lane_font_ = std::min(kHeaderSize, (row_height_ - 1) / 1.17);
    BusyShares();
  }

  // Each row's busy share of the steady time (of the span without a summary or steady steps):
  // its firings' time within it (a queue runs one firing at a time, so they never overlap).
  void BusyShares() {
    share_begin_ = model_.span_begin();
    share_end_ = model_.span_end();
    steady_shares_ = summary_ != nullptr && summary_->steady_end > summary_->steady_begin;
    if (steady_shares_) {
      share_begin_ = summary_->steady_begin;
      share_end_ = summary_->steady_end;
    }
    row_busy_.assign(rows_.size(), 0);
    for (const FiringRecord& firing : model_.firings) {
      const ActorFacts& actor = ActorOf(firing);
      const TimeNs start = std::max(firing.start, share_begin_);
      const TimeNs end = std::min(firing.end, share_end_);
      if (end > start) {
        row_busy_[static_cast<size_t>(row_of_[{actor.device, actor.queue}])] +=
            static_cast<double>(end - start);
      }
    }
    const double length = static_cast<double>(std::max<TimeNs>(1, share_end_ - share_begin_));
    for (double& busy : row_busy_) busy /= length;
  }

  std::string BusyText(size_t row) const {
    char text[32];
    std::snprintf(text, sizeof(text), "  %.0f%% busy", 100 * row_busy_[row]);
    return text;
  }

  std::string RowName(size_t row) const {
    return plan_.devices[static_cast<size_t>(rows_[row].first)].name + " q" +
           std::to_string(rows_[row].second);
  }

  // The label column as wide as the widest label, within bounds; the plot takes the rest.
  void Columns() {
    double widest = 0;
    for (size_t r = 0; r < rows_.size(); ++r) {
      widest = std::max(widest, TextWidth(RowName(r) + BusyText(r), lane_font_));
    }
    const int most = std::max(kMinLabelColumn, options_.width * 2 / 5);
    label_column_ =
        std::clamp(static_cast<int>(std::ceil(widest)) + kMargin + 6, kMinLabelColumn, most);
    width_ = std::max(options_.width, label_column_ + kRightMargin + 100);
    plot_width_ = width_ - label_column_ - kRightMargin;
  }

  // The header: the title, the steady steps' idle time, the warm-up's, the critical path.
  void HeaderLines() {
    if (summary_ == nullptr) return;
    const TraceSummary& summary = *summary_;
    if (summary.bubble_measured >= 0) {
      const std::string steady = StepsText(summary.first_steady_step, summary.end_steady_step);
      header_.push_back("Steady " + steady + ": devices idle " + Percent(summary.bubble_measured) +
                        " = filling and draining " + Percent(summary.bubble_fill_drain) +
                        " (formula " + Percent(summary.bubble_formula) + ") + imbalance " +
                        Percent(summary.bubble_imbalance));
    }
    if (summary.warmup_idle >= 0) {
      header_.push_back("Warm-up step " + std::to_string(summary.first_step) +
                        " (pale band), apart: idle " + Percent(summary.warmup_idle) +
                        " = filling and draining " + Percent(summary.warmup_fill_drain) +
                        " + imbalance " + Percent(summary.warmup_imbalance));
    }
    if (!summary.path_actors.empty() && summary.path_seconds > 0) {
      // The kernels' and the waits' shares first: the actors after them may be cut to fit.
      std::string text = "Critical path of the steady steps (red line), " +
                         FormatSeconds(summary.path_seconds) + ": kernels " +
                         Percent(summary.path_busy_seconds / summary.path_seconds) + ", waits " +
                         Percent(summary.path_wait_seconds / summary.path_seconds) + "; most: ";
      size_t shown = 0;
      for (const PathActor& on_path : summary.path_actors) {
        if (shown == 3) break;
        text += (shown++ == 0 ? "" : ", ") + plan_.actors[static_cast<size_t>(on_path.actor)].name +
                " " + Percent(on_path.share);
      }
      header_.push_back(text);
    }
  }

  void Open() {
    // Each header line below the title; then the step labels' line; then the plot.
    const double last_baseline = 20 + kHeaderLeading * static_cast<double>(header_.size());
    step_baseline_ = last_baseline + 19;
    top_ = static_cast<int>(std::ceil(step_baseline_ + 6));
    plot_height_ = static_cast<int>(rows_.size()) * row_height_;
    svg_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width_) +
            "\" height=\"0\" viewBox=\"0 0 " + std::to_string(width_) +
            " 0\" font-family=\"sans-serif\" font-size=\"12\">\n";
    svg_ += "<title>" + EscapeXml("timeline of job '" + plan_.job_name + "'") + "</title>\n";
  }

  void Header() {
    const double room = width_ - 2 * kMargin;
    Text(kMargin, 20,
         FitText("job '" + plan_.job_name + "': " + std::to_string(model_.firings.size()) +
                     " firings over " + FormatSeconds((end_ - begin_) * 1e-9) +
                     (cut_before_ ? ", from step " + std::to_string(step_starts_.begin()->first) +
                                        "'s start"
                                  : std::string()),
                 kTitleSize * 1.12, room),
         kTitleSize, TextAnchor::kStart, " font-size=\"15\" font-weight=\"bold\"", true);
    double baseline = 20;
    for (const std::string& line : header_) {
      baseline += kHeaderLeading;
      const bool path = line.rfind("Critical", 0) == 0;
      Text(kMargin, baseline, FitText(line, kHeaderSize, room), kHeaderSize, TextAnchor::kStart,
           path ? " fill=\"#a11\"" : " fill=\"#444\"");
    }
    // Above the lane labels: what their share is of.
    Text(label_column_ - 6, step_baseline_,
         FitText(steady_shares_ ? "busy: share of steady steps" : "busy: share of the span",
                 kStepLabelSize, label_column_ - kMargin - 6),
         kStepLabelSize, TextAnchor::kEnd, " font-size=\"10\" fill=\"#666\"");
  }

  void RowBackgroundsAndLabels() {
    for (size_t i = 0; i < rows_.size(); ++i) {
      const int y = top_ + static_cast<int>(i) * row_height_;
      svg_ += "<path class=\"row\" d=\"M" + std::to_string(label_column_) + " " +
              std::to_string(y + 1) + " h" + std::to_string(plot_width_) + " v" +
              std::to_string(row_height_ - 2) + " h-" + std::to_string(plot_width_) +
              " z\" fill=\"" + (i % 2 ? "#ececec" : kIdleColor) + "\"/>\n";
      const std::string busy = BusyText(i);
      const double room = label_column_ - kMargin - 6 - TextWidth(busy, lane_font_);
      const std::string label = FitText(RowName(i), lane_font_, room, /*keep_end=*/true) + busy;
      const double baseline = y + row_height_ / 2.0 + lane_font_ * 0.35;
      Text(label_column_ - 6, baseline, label, lane_font_, TextAnchor::kEnd,
           " font-size=\"" + Number(lane_font_) + "\"");
    }
  }

  bool InPipeline(const FiringRecord& firing) const {
    return !has_compute_ || ActorOf(firing).kind == "compute";
  }

  // The warm-up step, which the steady figures leave out, on a pale band from the span's start
  // to the end of its last pipeline firing.
  void WarmupBand() {
    for (const ActorFacts& actor : plan_.actors) has_compute_ |= actor.kind == "compute";
    if (summary_ == nullptr || summary_->first_steady_step <= summary_->first_step) return;
    TimeNs warmup_end = begin_;
    for (const FiringRecord& firing : model_.firings) {
      if (InPipeline(firing) && model_.StepOf(firing) == summary_->first_step) {
        warmup_end = std::max(warmup_end, firing.end);
      }
    }
    if (warmup_end <= begin_) return;
    warmup_band_ = true;
    svg_ += "<path class=\"warmup\" d=\"M" + std::to_string(label_column_) + " " +
            std::to_string(top_) + " H" + Number(XOf(warmup_end)) + " V" +
            std::to_string(top_ + plot_height_) + " H" + std::to_string(label_column_) +
            " z\" fill=\"" + kWarmupColor + "\" fill-opacity=\"0.7\"/>\n";
  }

  // Dashed lines where steps begin (the first firing of each of an actor that
  // StepStartingActors names), labelled; steps that
  // begin closer than a label's width share one label ("steps 1-2").
  void StepLines() {
    if (step_starts_.empty() || step_starts_.size() > 200) return;
    std::vector<int64_t> steps;
    std::vector<double> xs;
    for (const auto& [step, start] : step_starts_) {
      const double x = XOf(start);
      svg_ += "<path class=\"step\" d=\"M" + Number(x) + " " + std::to_string(top_ - 4) + " V" +
              std::to_string(top_ + plot_height_) +
              "\" stroke=\"#666\" stroke-dasharray=\"3,3\" fill=\"none\"/>\n";
      steps.push_back(step);
      xs.push_back(x);
    }
    auto name = [&](size_t first, size_t last) {
      return first == last
                 ? "step " + std::to_string(steps[first])
                 : "steps " + std::to_string(steps[first]) + "-" + std::to_string(steps[last]);
    };
    for (const PlacedLabel& label :
         GroupLabels(xs, name, kStepLabelSize, /*gap=*/6, width_ - 2.0)) {
      Text(label.x, step_baseline_, label.text, kStepLabelSize, TextAnchor::kStart,
           " font-size=\"10\" fill=\"#666\"");
    }
  }

  // Firings, row by row in time order; merged below a pixel only for very large traces.
  void Firings() {
    if (summary_ != nullptr) {
      on_path_.insert(summary_->critical_path.begin(), summary_->critical_path.end());
    }
    const bool merge = static_cast<int64_t>(model_.firings.size()) > options_.max_firing_rects;
    std::vector<std::vector<size_t>> by_row(rows_.size());
    for (size_t i = 0; i < model_.firings.size(); ++i) {
      by_row[RowOf(model_.firings[i])].push_back(i);
    }
    for (size_t r = 0; r < rows_.size(); ++r) {
      const double y = top_ + static_cast<double>(r) * row_height_ + 3;
      const double h = row_height_ - 6;
      const std::vector<size_t>& list = by_row[r];
      for (size_t k = 0; k < list.size();) {
        const FiringRecord& firing = model_.firings[list[k]];
        const ActorFacts& actor = ActorOf(firing);
        if (firing.end < begin_) {  // Before the time shown (TimeRange).
          ++k;
          continue;
        }
        const double x0 = XOf(std::max(firing.start, begin_));
        double x1 = XOf(firing.end);
        size_t next = k + 1;
        while (merge && next < list.size()) {
          const FiringRecord& other = model_.firings[list[next]];
          if (ActorOf(other).kind != actor.kind || XOf(other.start) - x1 > 1.0) break;
          x1 = std::max(x1, XOf(other.end));
          ++next;
        }
        std::string title;
        if (next - k > 1) {
          title = std::to_string(next - k) + " " + actor.kind + " firings";
        } else {
          title = actor.name + " (" + actor.kind + ") firing " + std::to_string(firing.firing) +
                  ", piece " + std::to_string(model_.FirstPieceOf(firing)) + ", " +
                  FormatSeconds((firing.end - firing.start) * 1e-9);
        }
        // Red edges for the critical path; a white edge parts firings wide enough to show it
        // (on a sliver it would only pale the colour).
        const bool outlined = next - k == 1 && on_path_.count(list[k]) > 0;
        if (outlined) title += "; on the critical path";
        svg_ += "<rect class=\"firing\" x=\"" + Number(x0) + "\" y=\"" + Number(y) + "\" width=\"" +
                Number(std::max(0.5, x1 - x0)) + "\" height=\"" + Number(h) + "\" fill=\"" +
                KindColor(actor.kind) + "\"" +
                (outlined      ? std::string(" stroke=\"") + kPathColor + "\" stroke-width=\"1.5\""
                 : x1 - x0 > 3 ? std::string(" stroke=\"#fff\" stroke-width=\"0.5\"")
                               : std::string()) +
                "><title>" + EscapeXml(title) + "</title></rect>\n";
        k = next;
      }
    }
  }

  // The critical path as one red line: along each firing on it, and from each firing's end to
  // the start of the next (a message, a wait) across the rows.
  void CriticalPathLine() {
    if (summary_ == nullptr || summary_->critical_path.empty()) return;
    std::string d;
    for (size_t i = 0; i < summary_->critical_path.size(); ++i) {
      const FiringRecord& firing = model_.firings[summary_->critical_path[i]];
      const double y = top_ + (static_cast<double>(RowOf(firing)) + 0.5) * row_height_;
      d += (i == 0 ? "M" : " L") + Number(XOf(firing.start)) + " " + Number(y) + " L" +
           Number(XOf(firing.end)) + " " + Number(y);
    }
    svg_ += std::string("<path class=\"critical-path\" d=\"") + d + "\" stroke=\"" + kPathColor +
            "\" stroke-width=\"1.5\" stroke-opacity=\"0.85\" fill=\"none\"/>\n";
  }

  void Axis() {
    axis_y_ = top_ + plot_height_ + 4;
    svg_ += "<path class=\"axis\" d=\"M" + std::to_string(label_column_) + " " +
            std::to_string(axis_y_) + " h" + std::to_string(plot_width_) +
            "\" stroke=\"#000\" fill=\"none\"/>\n";
    // Ticks at round times since the trace's origin (the time shown may begin later).
    const double from_seconds = begin_ * 1e-9;
    const double to_seconds = end_ * 1e-9;
    const double tick = TickStep(to_seconds - from_seconds, std::max(2, plot_width_ / 90));
    const double baseline = axis_y_ + 18;
    double free_from = 0;  // Where the last tick label ended.
    for (double t = std::ceil(from_seconds / tick - 1e-9) * tick; t <= to_seconds + tick * 1e-9;
         t += tick) {
      const double x = XOf(static_cast<TimeNs>(std::llround(t * 1e9)));
      svg_ +=
          "<path d=\"M" + Number(x) + " " + std::to_string(axis_y_) + " v5\" stroke=\"#000\"/>\n";
      const std::string text = TimeLabel(std::abs(t) < tick * 1e-6 ? 0.0 : t, tick);  // No "-0".
      TextBox box = BoxOf(x, baseline, text, kAxisLabelSize, TextAnchor::kMiddle);
      box.x = std::min(box.x, width_ - 2 - box.width);
      if (box.x < free_from + 4) continue;  // No room: the tick stays unlabelled.
      free_from = box.x + box.width;
      Text(box.x, baseline, text, kAxisLabelSize, TextAnchor::kStart, " font-size=\"11\"");
    }
  }

  // The legend: the kinds present, idle, the warm-up band, the critical path; wrapped to the
  // picture's width.
  void Legend() {
    struct Item {
      std::string text;
      std::string swatch;  // An SVG element at (0, 0), 12 px wide.
    };
    std::vector<Item> items;
    std::set<std::string> kinds;
    for (const ActorFacts& actor : plan_.actors) kinds.insert(actor.kind);
    for (const std::string& kind : kinds) items.push_back({kind, Swatch(KindColor(kind))});
    items.push_back({"idle", Swatch(kIdleColor)});
    if (warmup_band_) {
      // In a window the first recorded step follows unrecorded ones: not a warm-up, but its
      // start overlaps theirs, so the steady figures leave it out all the same.
      items.push_back({model_.info.window.all()
                           ? "warm-up step (left out of the steady figures)"
                           : "the window's first step (left out of the steady figures)",
                       Swatch(kWarmupColor)});
    }
    if (summary_ != nullptr && !summary_->critical_path.empty()) {
      items.push_back(
          {"critical path of the steady steps", std::string("<path d=\"M0 -4 h12\" stroke=\"") +
                                                    kPathColor + "\" stroke-width=\"2\"/>"});
    }
    double x = label_column_;
    double baseline = axis_y_ + 18 + 26;
    for (const Item& item : items) {
      const std::string text = FitText(item.text, kLegendSize, width_ - 2 * kMargin - 16);
      const double item_width = 16 + TextWidth(text, kLegendSize);
      if (x > label_column_ && x + item_width > width_ - kMargin) {
        x = label_column_;
        baseline += kLegendLeading;
      }
      if (x + item_width > width_ - kMargin) x = kMargin;  // A long item: the whole width.
      svg_ += "<g class=\"legend\" transform=\"translate(" + Number(x) + " " + Number(baseline) +
              ")\">" + item.swatch + "</g>\n";
      Text(x + 16, baseline, text, kLegendSize, TextAnchor::kStart, " fill=\"#333\"");
      x += item_width + 18;
    }
    height_ = static_cast<int>(std::ceil(baseline + 12));
  }

  static std::string Swatch(const char* color) {
    return std::string("<path d=\"M0 -10 h12 v12 h-12 z\" fill=\"") + color + "\"/>";
  }

  void Text(double x, double baseline, const std::string& text, double size, TextAnchor anchor,
            const std::string& attributes, bool bold = false) {
    if (text.empty()) return;
    svg_ += "<text x=\"" + Number(x) + "\" y=\"" + Number(baseline) + "\"" +
            (anchor == TextAnchor::kStart
                 ? std::string()
                 : std::string(" text-anchor=\"") + AnchorName(anchor) + "\"") +
            attributes + ">" + EscapeXml(text) + "</text>\n";
    boxes_.push_back(BoxOf(x, baseline, text, size, anchor, bold));
  }

  void ReplaceFirst(const std::string& from, const std::string& to) {
    const size_t at = svg_.find(from);
    if (at != std::string::npos) svg_.replace(at, from.size(), to);
  }

  const ActorFacts& ActorOf(const FiringRecord& firing) const {
    return plan_.actors[static_cast<size_t>(firing.actor)];
  }
  size_t RowOf(const FiringRecord& firing) const {
    const ActorFacts& actor = ActorOf(firing);
    return static_cast<size_t>(row_of_.at({actor.device, actor.queue}));
  }
  double XOf(TimeNs time) const { return label_column_ + (time - begin_) * scale_; }

  const TraceModel& model_;
  const PlanFacts& plan_;
  const TraceSummary* summary_;
  const TimelineOptions& options_;

  std::vector<std::pair<int32_t, int32_t>> rows_;
  std::map<std::pair<int32_t, int32_t>, int> row_of_;
  std::vector<double> row_busy_;
  bool steady_shares_ = false;
  TimeNs share_begin_ = 0;
  TimeNs share_end_ = 0;
  std::vector<std::string> header_;
  std::set<size_t> on_path_;
  bool has_compute_ = false;
  bool warmup_band_ = false;

  int row_height_ = 24;
  double lane_font_ = kHeaderSize;
  int label_column_ = kMinLabelColumn;
  int width_ = 0;
  int plot_width_ = 0;
  int plot_height_ = 0;
  int top_ = 0;
  int axis_y_ = 0;
  int height_ = 0;
  double step_baseline_ = 0;
  std::map<int64_t, TimeNs> step_starts_;
  bool cut_before_ = false;  // The time shown begins after the span (TimeRange).
  TimeNs begin_ = 0;
  TimeNs end_ = 1;
  double scale_ = 1;  // Pixels per ns.

  std::string svg_;
  std::vector<TextBox> boxes_;
};

}  // namespace

std::string RenderTimelineSvg(const TraceModel& model, const TraceSummary* summary,
                              const TimelineOptions& options) {
  TimelinePainter painter(model, summary, options);
  painter.Paint();
  return painter.svg();
}

std::vector<TextBox> TimelineTextBoxes(const TraceModel& model, const TraceSummary* summary,
                                       const TimelineOptions& options, int* width, int* height) {
  TimelinePainter painter(model, summary, options);
  painter.Paint();
  if (width != nullptr) *width = painter.width();
  if (height != nullptr) *height = painter.height();
  return painter.boxes();
}

}  // namespace trace
}  // namespace softwire
