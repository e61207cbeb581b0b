#include "cli/step_output.h"

#include <cmath>

namespace softwire {
namespace cli {

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
