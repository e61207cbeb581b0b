#include "trace/timeline_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/format_bytes.h"

namespace softwire {
namespace trace {
namespace {

constexpr int kLabelWidth = 190;
constexpr int kRightMargin = 20;
constexpr int kTopMargin = 62;
constexpr const char* kWarmupColor = "#f6e7a8";
constexpr int kAxisHeight = 34;
constexpr int kLegendHeight = 30;

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", value);
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

}  // namespace

const char* KindColor(const std::string& kind) {
  static const std::map<std::string, const char*> colors = {
      {"compute", "#4e79a7"}, {"copy", "#f28e2b"},       {"boxing", "#e15759"},
      {"update", "#76b7b2"},  {"accumulate", "#59a14f"}, {"source", "#edc948"},
      {"sink", "#b07aa1"},    {"variable", "#9c755f"},   {"send", "#ff9da7"},
      {"recv", "#d37295"}};
  auto found = colors.find(kind);
  return found == colors.end() ? "#bab0ac" : found->second;
}

std::string EscapeXml(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string RenderTimelineSvg(const TraceModel& model, const TraceSummary* summary,
                              const TimelineOptions& options) {
  const PlanFacts& plan = model.plan;
  // Rows: every (device, queue) some actor uses, in plan order.
  std::set<std::pair<int32_t, int32_t>> queue_set;
  for (const ActorFacts& actor : plan.actors) queue_set.insert({actor.device, actor.queue});
  std::vector<std::pair<int32_t, int32_t>> rows(queue_set.begin(), queue_set.end());
  std::map<std::pair<int32_t, int32_t>, int> row_of;
  for (size_t i = 0; i < rows.size(); ++i) row_of[rows[i]] = static_cast<int>(i);

  const int width = std::max(options.width, kLabelWidth + kRightMargin + 100);
  const int plot_width = width - kLabelWidth - kRightMargin;
  const int row_height = std::max(8, options.row_height);
  const int plot_height = static_cast<int>(rows.size()) * row_height;
  const int height = kTopMargin + plot_height + kAxisHeight + kLegendHeight + 10;
  const TimeNs begin = model.span_begin();
  const TimeNs end = std::max(model.span_end(), begin + 1);
  const double scale = plot_width / static_cast<double>(end - begin);  // Pixels per ns.
  auto x_of = [&](TimeNs time) { return kLabelWidth + (time - begin) * scale; };

  std::set<size_t> on_path;
  if (summary != nullptr)
    on_path.insert(summary->critical_path.begin(), summary->critical_path.end());

  std::string svg;
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
         "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) +
         " " + std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<title>" + EscapeXml("timeline of job '" + plan.job_name + "'") + "</title>\n";
  svg += "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">" +
         EscapeXml("job '" + plan.job_name + "': " + std::to_string(model.firings.size()) +
                   " firings over " + FormatSeconds((end - begin) * 1e-9)) +
         "</text>\n";
  if (summary != nullptr && summary->bubble_measured >= 0) {
    char text[240];
    std::snprintf(text, sizeof(text),
                  "steady steps idle %.1f%%: filling and draining %.1f%% (formula %.1f%%) + "
                  "imbalance %.1f%%; outlined: critical path",
                  100 * summary->bubble_measured, 100 * summary->bubble_fill_drain,
                  100 * summary->bubble_formula, 100 * summary->bubble_imbalance);
    svg += "<text x=\"10\" y=\"38\" fill=\"#555\">" + EscapeXml(text) + "</text>\n";
  }

  // Each row's busy share of the span: its firings' time over the span (a queue runs one
  // firing at a time, so its firings never overlap).
  std::vector<double> row_busy(rows.size(), 0);
  for (const FiringRecord& firing : model.firings) {
    const ActorFacts& actor = plan.actors[static_cast<size_t>(firing.actor)];
    row_busy[static_cast<size_t>(row_of[{actor.device, actor.queue}])] +=
        static_cast<double>(firing.end - firing.start);
  }

  // Row backgrounds (idle time shows through) and labels.
  for (size_t i = 0; i < rows.size(); ++i) {
    const int y = kTopMargin + static_cast<int>(i) * row_height;
    svg += "<path class=\"row\" d=\"M" + std::to_string(kLabelWidth) + " " + std::to_string(y + 1) +
           " h" + std::to_string(plot_width) + " v" + std::to_string(row_height - 2) + " h-" +
           std::to_string(plot_width) + " z\" fill=\"" + (i % 2 ? "#ececec" : "#e4e4e4") + "\"/>\n";
    char busy[32];
    std::snprintf(busy, sizeof(busy), "  %.0f%% busy",
                  100 * row_busy[i] / static_cast<double>(end - begin));
    std::string label = plan.devices[static_cast<size_t>(rows[i].first)].name + " q" +
                        std::to_string(rows[i].second) + busy;
    svg += "<text x=\"" + std::to_string(kLabelWidth - 6) + "\" y=\"" +
           std::to_string(y + row_height / 2 + 4) + "\" text-anchor=\"end\">" + EscapeXml(label) +
           "</text>\n";
  }

  // Step boundaries: where the first firing of each step started, counting the compute actors
  // when there are some (sources and variables run ahead of the pipeline), as the summary does.
  bool has_compute = false;
  for (const ActorFacts& actor : plan.actors) has_compute |= actor.kind == "compute";
  std::map<int64_t, TimeNs> step_starts;
  for (const FiringRecord& firing : model.firings) {
    if (has_compute && plan.actors[static_cast<size_t>(firing.actor)].kind != "compute") continue;
    const int64_t step = model.StepOf(firing);
    auto found = step_starts.find(step);
    if (found == step_starts.end() || firing.start < found->second)
      step_starts[step] = firing.start;
  }
  // The warm-up step, which the steady figures leave out, on a pale band from the span's
  // start to the end of its last pipeline firing.
  bool warmup_band = false;
  if (summary != nullptr && summary->first_steady_step > summary->first_step) {
    TimeNs warmup_end = begin;
    for (const FiringRecord& firing : model.firings) {
      if (has_compute && plan.actors[static_cast<size_t>(firing.actor)].kind != "compute") continue;
      if (model.StepOf(firing) == summary->first_step)
        warmup_end = std::max(warmup_end, firing.end);
    }
    if (warmup_end > begin) {
      warmup_band = true;
      svg += "<path class=\"warmup\" d=\"M" + std::to_string(kLabelWidth) + " " +
             std::to_string(kTopMargin) + " H" + Number(x_of(warmup_end)) + " V" +
             std::to_string(kTopMargin + plot_height) + " H" + std::to_string(kLabelWidth) +
             " z\" fill=\"" + kWarmupColor + "\" fill-opacity=\"0.7\"/>\n";
    }
  }
  if (step_starts.size() <= 200) {
    // Steps that begin closer than a label's width share one label ("steps 1-2"): pipelined
    // steps start a few pixels apart, and their labels would print over each other.
    constexpr double kLabelWidth = 44;
    std::vector<std::pair<double, std::string>> labels;  // x, text.
    int64_t group_first = -1;
    int64_t group_last = -1;
    double group_x = 0;
    auto close_group = [&] {
      if (group_first < 0) return;
      labels.emplace_back(
          group_x, group_first == group_last
                       ? "step " + std::to_string(group_first)
                       : "steps " + std::to_string(group_first) + "-" + std::to_string(group_last));
    };
    for (const auto& [step, start] : step_starts) {
      const double at = x_of(start);
      const std::string x = Number(at);
      svg += "<path class=\"step\" d=\"M" + x + " " + std::to_string(kTopMargin - 4) + " V" +
             std::to_string(kTopMargin + plot_height) +
             "\" stroke=\"#666\" stroke-dasharray=\"3,3\" fill=\"none\"/>\n";
      if (group_first >= 0 && at - group_x < kLabelWidth) {
        group_last = step;
        continue;
      }
      close_group();
      group_first = group_last = step;
      group_x = at;
    }
    close_group();
    for (const auto& [x, text] : labels) {
      svg += "<text x=\"" + Number(x) + "\" y=\"" + std::to_string(kTopMargin - 7) +
             "\" font-size=\"10\" fill=\"#666\">" + EscapeXml(text) + "</text>\n";
    }
  }

  // Firings, row by row in time order; merged below a pixel only for very large traces.
  const bool merge = static_cast<int64_t>(model.firings.size()) > options.max_firing_rects;
  std::vector<std::vector<size_t>> by_row(rows.size());
  for (size_t i = 0; i < model.firings.size(); ++i) {
    const ActorFacts& actor = plan.actors[static_cast<size_t>(model.firings[i].actor)];
    by_row[static_cast<size_t>(row_of[{actor.device, actor.queue}])].push_back(i);
  }
  for (size_t r = 0; r < rows.size(); ++r) {
    const double y = kTopMargin + static_cast<double>(r) * row_height + 3;
    const double h = row_height - 6;
    const std::vector<size_t>& list = by_row[r];
    for (size_t k = 0; k < list.size();) {
      const FiringRecord& firing = model.firings[list[k]];
      const ActorFacts& actor = plan.actors[static_cast<size_t>(firing.actor)];
      double x0 = x_of(firing.start);
      double x1 = x_of(firing.end);
      size_t next = k + 1;
      if (merge) {
        while (next < list.size()) {
          const FiringRecord& other = model.firings[list[next]];
          if (plan.actors[static_cast<size_t>(other.actor)].kind != actor.kind ||
              x_of(other.start) - x1 > 1.0) {
            break;
          }
          x1 = std::max(x1, x_of(other.end));
          ++next;
        }
      }
      std::string title;
      if (next - k > 1) {
        title = std::to_string(next - k) + " " + actor.kind + " firings";
      } else {
        title = actor.name + " (" + actor.kind + ") firing " + std::to_string(firing.firing) +
                ", piece " + std::to_string(model.FirstPieceOf(firing)) + ", " +
                FormatSeconds((firing.end - firing.start) * 1e-9);
      }
      const bool outlined = next - k == 1 && on_path.count(list[k]) > 0;
      svg += "<rect class=\"firing\" x=\"" + Number(x0) + "\" y=\"" + Number(y) + "\" width=\"" +
             Number(std::max(0.5, x1 - x0)) + "\" height=\"" + Number(h) + "\" fill=\"" +
             KindColor(actor.kind) + "\"" +
             (outlined ? " stroke=\"#000\" stroke-width=\"1\""
                       : " stroke=\"#fff\" stroke-width=\"0.5\"") +
             "><title>" + EscapeXml(title) + "</title></rect>\n";
      k = next;
    }
  }

  // Time axis.
  const int axis_y = kTopMargin + plot_height + 4;
  svg += "<path class=\"axis\" d=\"M" + std::to_string(kLabelWidth) + " " + std::to_string(axis_y) +
         " h" + std::to_string(plot_width) + "\" stroke=\"#000\" fill=\"none\"/>\n";
  const double span_seconds = (end - begin) * 1e-9;
  const double tick = TickStep(span_seconds, 10);
  for (double t = 0; t <= span_seconds + tick * 1e-9; t += tick) {
    const std::string x = Number(kLabelWidth + t / span_seconds * plot_width);
    svg += "<path d=\"M" + x + " " + std::to_string(axis_y) + " v5\" stroke=\"#000\"/>\n";
    svg += "<text x=\"" + x + "\" y=\"" + std::to_string(axis_y + 18) +
           "\" text-anchor=\"middle\" font-size=\"11\">" + EscapeXml(TimeLabel(t, tick)) +
           "</text>\n";
  }

  // Legend: the kinds present.
  std::set<std::string> kinds;
  for (const ActorFacts& actor : plan.actors) kinds.insert(actor.kind);
  int legend_x = kLabelWidth;
  const int legend_y = axis_y + kAxisHeight;
  for (const std::string& kind : kinds) {
    svg += "<path class=\"legend\" d=\"M" + std::to_string(legend_x) + " " +
           std::to_string(legend_y - 10) + " h12 v12 h-12 z\" fill=\"" + KindColor(kind) + "\"/>\n";
    svg += "<text x=\"" + std::to_string(legend_x + 16) + "\" y=\"" + std::to_string(legend_y) +
           "\">" + EscapeXml(kind) + "</text>\n";
    legend_x += 24 + 8 * static_cast<int>(kind.size()) + 12;
  }
  svg += "<text x=\"" + std::to_string(legend_x + 10) + "\" y=\"" + std::to_string(legend_y) +
         "\" fill=\"#555\">grey: idle</text>\n";
  if (warmup_band) {
    legend_x += 90;
    svg += "<path class=\"legend\" d=\"M" + std::to_string(legend_x) + " " +
           std::to_string(legend_y - 10) + " h12 v12 h-12 z\" fill=\"" + kWarmupColor + "\"/>\n";
    svg += "<text x=\"" + std::to_string(legend_x + 16) + "\" y=\"" + std::to_string(legend_y) +
           "\" fill=\"#555\">warm-up step (left out of the steady figures)</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

namespace {

std::string Cell(const std::string& text) {
  return "<td>" + EscapeXml(text) + "</td>";
}
std::string NumberCell(const std::string& text) {
  return "<td class=\"n\">" + EscapeXml(text) + "</td>";
}
std::string PercentText(double share) {
  char text[16];
  std::snprintf(text, sizeof(text), "%.1f%%", 100 * share);
  return text;
}
// A share as a number and a bar.
std::string ShareCell(double share, const char* color) {
  char text[200];
  std::snprintf(text, sizeof(text),
                "<td class=\"n\">%.1f%%<div class=\"bar\"><div style=\"width:%.1f%%;"
                "background:%s\"></div></div></td>",
                100 * share, std::min(100.0, std::max(0.0, 100 * share)), color);
  return text;
}

}  // namespace

std::string RenderHtmlReport(const TraceModel& model, const TraceSummary& summary) {
  const PlanFacts& plan = model.plan;
  std::string html;
  html += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" +
          EscapeXml("softwire trace: " + plan.job_name) + "</title>\n";
  html +=
      "<style>body{font-family:sans-serif;margin:20px;color:#222}"
      "table{border-collapse:collapse;margin:8px 0 20px}"
      "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px}"
      "th{background:#f2f2f2;text-align:left}td.n{text-align:right}"
      ".bar{width:80px;height:6px;background:#eee;margin-top:2px}.bar div{height:6px}"
      "pre{background:#f7f7f7;padding:10px;font-size:12px;overflow-x:auto}"
      ".svg{overflow-x:auto}</style>\n</head><body>\n";
  html += "<h1>" + EscapeXml("Trace of job '" + plan.job_name + "'") + "</h1>\n<p>";
  html +=
      EscapeXml(std::to_string(plan.steps) + " steps x " + std::to_string(plan.pieces_per_step) +
                " pieces; engine " + model.info.engine + "; span " +
                FormatSeconds(summary.span_seconds) + "; " + std::to_string(summary.firings) +
                " firings; steps recorded: " + model.info.window.ToString() +
                "; events dropped: " + std::to_string(model.info.events_dropped));
  if (!model.info.outcome.empty() && model.info.outcome != "ok") {
    html += "<br><b>" + EscapeXml("run: " + model.info.outcome) + "</b>";
  }
  html += "</p>\n<h2>Timeline</h2>\n<div class=\"svg\">\n" + RenderTimelineSvg(model, &summary) +
          "</div>\n";

  html +=
      "<h2>Devices</h2>\n<table><tr><th>device</th><th>kind</th><th>utilization</th>"
      "<th>steady steps</th><th>busy</th></tr>\n";
  for (const DeviceUsage& usage : summary.devices) {
    const DeviceFacts& device = plan.devices[static_cast<size_t>(usage.device)];
    html += "<tr>" + Cell(device.name) + Cell(device.kind) +
            ShareCell(usage.utilization, "#4e79a7") +
            ShareCell(usage.steady_utilization, "#4e79a7") +
            NumberCell(FormatSeconds(usage.busy_seconds)) + "</tr>\n";
  }
  html += "</table>\n";

  html +=
      "<h2>Actors</h2>\n<table><tr><th>actor</th><th>kind</th><th>device</th>"
      "<th>firings</th><th>busy</th><th>starved</th><th>blocked</th><th>queued</th></tr>\n";
  for (const ActorUsage& usage : summary.actors) {
    const ActorFacts& actor = plan.actors[static_cast<size_t>(usage.actor)];
    html += "<tr>" + Cell(actor.name) + Cell(actor.kind) +
            Cell(plan.devices[static_cast<size_t>(actor.device)].name) +
            NumberCell(std::to_string(usage.firings)) + ShareCell(usage.busy, "#4e79a7") +
            ShareCell(usage.starved, "#e15759") + ShareCell(usage.blocked, "#f28e2b") +
            ShareCell(usage.queued, "#bab0ac") + "</tr>\n";
  }
  html += "</table>\n";

  html += "<h2>Critical path</h2>\n<p>";
  if (summary.bottleneck >= 0) {
    const ActorFacts& actor = plan.actors[static_cast<size_t>(summary.bottleneck)];
    html += EscapeXml("Bottleneck: actor '" + actor.name + "' (" + actor.kind + "), " +
                      FormatSeconds(summary.bottleneck_seconds) +
                      " of kernel time on the critical path. The path has " +
                      std::to_string(summary.critical_path.size()) + " firings over " +
                      FormatSeconds(summary.path_seconds) + ".");
  } else {
    html += "No firings were recorded.";
  }
  html += "</p>\n<table><tr><th>actor</th><th>firings on the path</th><th>kernel time</th></tr>\n";
  for (const PathActor& on_path : summary.path_actors) {
    html += "<tr>" + Cell(plan.actors[static_cast<size_t>(on_path.actor)].name) +
            NumberCell(std::to_string(on_path.firings)) +
            NumberCell(FormatSeconds(on_path.busy_seconds)) + "</tr>\n";
  }
  html += "</table>\n";

  html += "<h2>Pipeline bubble</h2>\n<p>" +
          EscapeXml(
              (summary.bubble_measured >= 0
                   ? "The devices idled " + PercentText(summary.bubble_measured) +
                         " of the steady steps: " + PercentText(summary.bubble_fill_drain) +
                         " the pipeline filling and draining (the busiest device idle), " +
                         PercentText(summary.bubble_imbalance) +
                         " imbalance (devices with less work than the busiest)."
                   : std::string("Not measured.")) +
              " The formula (p-1)/(m+p-1), for equal stages, gives " +
              PercentText(summary.bubble_formula) + " with p = " + std::to_string(summary.stages) +
              " stages and m = " + std::to_string(summary.pieces_per_step) + " pieces per step." +
              (summary.warmup_idle >= 0
                   ? " The warm-up step apart: idle " + PercentText(summary.warmup_idle) + " (" +
                         PercentText(summary.warmup_fill_drain) + " filling and draining, " +
                         PercentText(summary.warmup_imbalance) + " imbalance)."
                   : std::string())) +
          "</p>\n";

  html +=
      "<h2>Memory</h2>\n<table><tr><th>device</th><th>high-water</th><th>registers</th>"
      "<th>workspaces and state</th><th>planned</th></tr>\n";
  for (const MemoryUsage& usage : summary.memory) {
    html += "<tr>" + Cell(plan.devices[static_cast<size_t>(usage.device)].name) +
            NumberCell(FormatBytes(usage.high_water)) +
            NumberCell(FormatBytes(usage.register_high_water)) +
            NumberCell(FormatBytes(usage.fixed_bytes)) +
            NumberCell(FormatBytes(usage.planned_bytes)) + "</tr>\n";
  }
  html += "</table>\n<h2>Summary</h2>\n<pre>" + EscapeXml(FormatSummary(model, summary)) +
          "</pre>\n</body></html>\n";
  return html;
}

}  // namespace trace
}  // namespace softwire
