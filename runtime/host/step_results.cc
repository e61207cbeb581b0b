#include "runtime/host/step_results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace softwire {
namespace runtime {
namespace {

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char text[40];
  std::snprintf(text, sizeof(text), "%.9g", value);
  return text;
}

std::string JsonString(const std::string& value) {
  std::string text = "\"";
  for (char c : value) {
    switch (c) {
      case '"':
        text += "\\\"";
        break;
      case '\\':
        text += "\\\\";
        break;
      case '\n':
        text += "\\n";
        break;
      case '\t':
        text += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          text += escaped;
        } else {
          text += c;
        }
    }
  }
  return text + "\"";
}

bool IsFixedKey(const std::string& name) {
  return name == "step" || name == "loss" || name == "samples_per_second" || name == "seconds";
}

}  // namespace

std::string MetricsJsonLine(const StepResult& step) {
  std::string line = "{\"step\":" + std::to_string(step.step) +
                     ",\"loss\":" + JsonNumber(step.loss) +
                     ",\"samples_per_second\":" + JsonNumber(step.samples_per_second) +
                     ",\"seconds\":" + JsonNumber(step.seconds);
  for (const auto& [name, value] : step.outputs) {
    // The loss output itself, when it is named "loss", is already the "loss" key.
    if (name == "loss" && (value == step.loss || (std::isnan(value) && std::isnan(step.loss)))) {
      continue;
    }
    line += "," + JsonString(IsFixedKey(name) ? "output:" + name : name) + ":" + JsonNumber(value);
  }
  return line + "}";
}

StepTimer::StepTimer(const proto::Plan& plan)
    : samples_per_step_(
          static_cast<double>(std::max<int64_t>(1, plan.schedule().pieces_per_step()) *
                              plan.schedule().micro_batch_size())) {
  for (const proto::PlanOutput& output : plan.output()) {
    if (output.is_loss()) loss_name_ = output.name();
  }
}

StepResult StepTimer::Time(const CollectedStep& step,
                           std::chrono::steady_clock::time_point started_at) {
  StepResult timed;
  timed.step = step.step;
  timed.outputs = step.outputs;
  auto loss = step.outputs.find(loss_name_);
  timed.loss = loss != step.outputs.end() ? loss->second : std::numeric_limits<double>::quiet_NaN();
  std::chrono::steady_clock::time_point previous = timed_ == 0 ? started_at : previous_;
  timed.seconds =
      std::max(0.0, std::chrono::duration<double>(step.completed_at - previous).count());
  timed.samples_per_second = timed.seconds > 0 ? samples_per_step_ / timed.seconds : 0.0;
  previous_ = std::max(previous, step.completed_at);
  ++timed_;
  return timed;
}

}  // namespace runtime
}  // namespace softwire
