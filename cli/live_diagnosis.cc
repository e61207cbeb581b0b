#include "cli/live_diagnosis.h"

#include <signal.h>

#include <cstdio>
#include <utility>

namespace softwire {
namespace cli {

StatusOr<std::unique_ptr<WaitStateSignal>> WaitStateSignal::Install(
    std::function<std::string()> report) {
  std::unique_ptr<WaitStateSignal> installed(new WaitStateSignal());
  installed->report_ = std::move(report);
  WaitStateSignal* self = installed.get();
  StatusOr<std::unique_ptr<SignalThread>> thread =
      SignalThread::Start({SIGUSR1}, "sw:diagnose", [self](int) {
        const std::string text = self->report_();
        std::fprintf(stderr, "%s\n", text.c_str());
        std::fflush(stderr);
      });
  if (!thread.ok()) return thread.status().WithContext("SIGUSR1 report");
  installed->thread_ = std::move(*thread);
  return installed;
}

WaitStateSignal::~WaitStateSignal() = default;

}  // namespace cli
}  // namespace softwire
