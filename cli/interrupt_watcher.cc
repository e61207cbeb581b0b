#include "cli/interrupt_watcher.h"

#include <signal.h>

#include <chrono>
#include <thread>
#include <utility>

namespace softwire {
namespace cli {

StatusOr<std::unique_ptr<InterruptWatcher>> InterruptWatcher::Install(
    std::function<void(int)> on_signal) {
  std::unique_ptr<InterruptWatcher> watcher(new InterruptWatcher());
  watcher->on_signal_ = std::move(on_signal);
  InterruptWatcher* self = watcher.get();
  StatusOr<std::unique_ptr<SignalThread>> thread =
      SignalThread::Start({SIGINT, SIGTERM}, "sw:signals", [self](int signal) {
        int expected = 0;
        self->first_signal_.compare_exchange_strong(expected, signal);
        self->on_signal_(signal);
      });
  if (!thread.ok()) return thread.status().WithContext("SIGINT/SIGTERM");
  watcher->thread_ = std::move(*thread);
  return watcher;
}

InterruptWatcher::~InterruptWatcher() = default;

int InterruptWatcher::Wait() {
  while (first_signal_.load() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return first_signal_.load();
}

}  // namespace cli
}  // namespace softwire
