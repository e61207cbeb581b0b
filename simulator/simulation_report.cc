#include "simulator/simulation_report.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "base/format_bytes.h"

namespace softwire {
namespace simulator {
namespace {

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, value);
  return buffer;
}

std::string Percent(double share) {
  return share < 0 ? std::string("     -") : Printf("%5.1f%%", 100 * share);
}

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string PadLeft(std::string text, size_t width) {
  if (text.size() < width) text.insert(0, width - text.size(), ' ');
  return text;
}

// "12,345,678".
std::string Grouped(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string StepRange(int64_t first, int64_t end) {
  if (end - first == 1) return "step " + std::to_string(first);
  return "steps " + std::to_string(first) + "-" + std::to_string(end - 1);
}

std::string QueueName(int32_t queue) {
  return queue == 0 ? "compute" : "copy " + std::to_string(queue);
}

void AppendSteps(const SimulationResult& result, std::string* out) {
  *out += "virtual time " + FormatDuration(result.total_ns) + "; steady step " +
          FormatDuration(result.steady_step_ns) + " (mean of " +
          StepRange(result.first_steady_step, result.steps) + ")\n";
  constexpr size_t kShown = 12;
  *out += "step times:";
  for (size_t s = 0; s < result.step_ns.size() && s < kShown; ++s) {
    *out += (s == 0 ? " " : ", ") + FormatDuration(result.step_ns[s]);
  }
  if (result.step_ns.size() > kShown) {
    *out += ", ... (" + std::to_string(result.step_ns.size() - kShown) + " more)";
  }
  *out += "\n";
}

void AppendQueues(const SimulationResult& result, std::string* out) {
  size_t width = 6;
  for (const std::string& name : result.device_names) width = std::max(width, name.size());
  *out += "\n" + Pad("device", width + 4) + Pad("queue", 9) + PadLeft("firings", 10) +
          PadLeft("busy", 12) + "   util  steady\n";
  int32_t last_device = -1;
  for (const QueueUsage& queue : result.queues) {
    const std::string device =
        queue.device == last_device ? "" : result.device_names[static_cast<size_t>(queue.device)];
    last_device = queue.device;
    *out += "  " + Pad(device, width + 2) + Pad(QueueName(queue.queue), 9) +
            PadLeft(Grouped(queue.firings), 10) + PadLeft(FormatDuration(queue.busy_ns), 12) + " " +
            Percent(queue.utilization) + "  " + Percent(queue.steady_utilization) + "\n";
  }
}

void AppendBubble(const SimulationResult& result, std::string* out) {
  *out += "\npipeline bubble: ";
  if (result.bubble_measured >= 0) {
    *out += "measured " + Printf("%.1f%%", 100 * result.bubble_measured) + " over " +
            StepRange(result.first_steady_step, result.steps);
  } else {
    *out += "not measured";
  }
  *out += "; formula (p-1)/(m+p-1) = " + Printf("%.1f%%", 100 * result.bubble_formula) +
          " (p = " + std::to_string(result.stages) +
          " stages, m = " + std::to_string(result.pieces_per_step) + " pieces per step)\n";
}

void AppendMemory(const SimulationResult& result, std::string* out) {
  size_t width = 6;
  for (const std::string& name : result.device_names) width = std::max(width, name.size());
  *out += "\n" + Pad("memory", width + 4) + PadLeft("planned", 12) + PadLeft("registers", 12) +
          PadLeft("in use max", 12) + PadLeft("fixed", 12) + PadLeft("high-water", 12) + "\n";
  for (const DeviceMemory& memory : result.memory) {
    *out += "  " + Pad(result.device_names[static_cast<size_t>(memory.device)], width + 2) +
            PadLeft(FormatBytes(memory.planned_bytes), 12) +
            PadLeft(FormatBytes(memory.planned_register_bytes), 12) +
            PadLeft(FormatBytes(memory.register_high_water), 12) +
            PadLeft(FormatBytes(memory.fixed_bytes), 12) +
            PadLeft(FormatBytes(memory.high_water()), 12) + "\n";
  }
  *out +=
      "  (registers: every slot the plan gives; in use max: most slot bytes in use at once; "
      "fixed: workspaces and actor state)\n";
}

}  // namespace

std::string FormatDuration(SimTime time) {
  const double t = static_cast<double>(time);
  if (time < 1000 && time > -1000) return std::to_string(time) + " ns";
  if (t < 1e6 && t > -1e6) return Printf("%.1f us", t / 1e3);
  if (t < 1e9 && t > -1e9) return Printf("%.3f ms", t / 1e6);
  return Printf("%.3f s", t / 1e9);
}

std::string FormatSimulationReport(const SimulationResult& result) {
  std::string out = "simulated '" + result.job_name + "': " + Grouped(result.actors) +
                    " actors on " + std::to_string(result.device_names.size()) + " devices, " +
                    std::to_string(result.steps) + " steps of " +
                    std::to_string(result.pieces_per_step) + " pieces, " +
                    std::to_string(result.stages) + " stages\n";
  AppendSteps(result, &out);
  AppendQueues(result, &out);
  AppendBubble(result, &out);
  AppendMemory(result, &out);
  out += "\nsimulation: " + Grouped(result.events) + " events (" + Grouped(result.firings) +
         " firings, " + Grouped(result.messages) + " messages, at most " +
         Grouped(result.max_messages_in_flight) + " in flight) in " +
         Printf("%.3f", result.wall_seconds) +
         " s of wall time: " + Printf("%.2f", result.events_per_second / 1e6) + " M events/s\n";
  return out;
}

}  // namespace simulator
}  // namespace softwire
