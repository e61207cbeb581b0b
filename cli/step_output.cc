#include "cli/step_output.h"

#include <cmath>

namespace softwire {
namespace cli {
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

std::string MetricsJsonLine(const runtime::StepResult& step) {
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

int64_t ProgressPrinter::AutoInterval(int64_t total_steps) {
  const int64_t target = std::max<int64_t>(1, total_steps / 20);
  for (int64_t scale = 1;; scale *= 10) {
    for (int64_t step : {1, 2, 5}) {
      if (step * scale >= target) return step * scale;
    }
  }
}

ProgressPrinter::ProgressPrinter(std::FILE* out, int64_t total_steps, int64_t every,
                                 std::string loss_name)
    : out_(out),
      total_steps_(total_steps),
      every_(every > 0 ? every : AutoInterval(total_steps)),
      loss_name_(std::move(loss_name)),
      width_(static_cast<int>(std::to_string(total_steps).size())) {}

void ProgressPrinter::OnStep(const runtime::StepResult& step) {
  elapsed_ += step.seconds;
  seconds_since_line_ += step.seconds;
  samples_since_line_ += step.samples_per_second * step.seconds;
  int64_t number = step.step + 1;
  if (!(step.step == 0 || number % every_ == 0 || number == total_steps_)) return;
  std::string line;
  char buffer[96];
  std::snprintf(buffer, sizeof(buffer), "step %*lld/%lld", width_, static_cast<long long>(number),
                static_cast<long long>(total_steps_));
  line += buffer;
  if (!std::isnan(step.loss)) {
    std::snprintf(buffer, sizeof(buffer), "  loss %.6f", step.loss);
    line += buffer;
  }
  for (const auto& [name, value] : step.outputs) {
    if (name == loss_name_) continue;
    std::snprintf(buffer, sizeof(buffer), "  %.40s %.6f", name.c_str(), value);
    line += buffer;
  }
  double rate = seconds_since_line_ > 0 ? samples_since_line_ / seconds_since_line_ : 0;
  std::snprintf(buffer, sizeof(buffer), "  %.0f samples/s  %.2f s", rate, elapsed_);
  line += buffer;
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
  seconds_since_line_ = 0;
  samples_since_line_ = 0;
}

}  // namespace cli
}  // namespace softwire
