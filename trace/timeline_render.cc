#include "trace/timeline_render.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "base/format_bytes.h"

namespace softwire {
namespace trace {

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

  html += "<h2>Critical path of the steady steps</h2>\n<p>";
  if (summary.bottleneck >= 0) {
    const ActorFacts& actor = plan.actors[static_cast<size_t>(summary.bottleneck)];
    html += EscapeXml("Bottleneck: actor '" + actor.name + "' (" + actor.kind + "), " +
                      FormatSeconds(summary.bottleneck_seconds) +
                      " of kernel time on the critical path. The path has " +
                      std::to_string(summary.critical_path.size()) + " firings over " +
                      FormatSeconds(summary.path_seconds) + ", " +
                      FormatSeconds(summary.path_wait_seconds) +
                      " of it between firings (messages, scheduling).");
  } else {
    html += "No firings were recorded in the steady steps.";
  }
  html +=
      "</p>\n<table><tr><th>actor</th><th>share of the path</th><th>firings on the path</th>"
      "<th>kernel time</th></tr>\n";
  for (const PathActor& on_path : summary.path_actors) {
    html += "<tr>" + Cell(plan.actors[static_cast<size_t>(on_path.actor)].name) +
            ShareCell(on_path.share, "#d62728") + NumberCell(std::to_string(on_path.firings)) +
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
