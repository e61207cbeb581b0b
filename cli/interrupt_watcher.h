// InterruptWatcher: SIGINT and SIGTERM as events on a thread of their own, for the commands that
// stay up until stopped (`softwire serve`) or follow a job (`softwire submit`, `watch`).
//
// A SignalThread (signal_thread.h) takes the signals; `on_signal` runs on its thread,
// "sw:signals", where anything may be done.
//
//   StatusOr<std::unique_ptr<InterruptWatcher>> interrupts =
//       InterruptWatcher::Install([&](int signal) { client.StopWatching(); });
//   ...;  (*interrupts)->Wait();  // Or not: the destructor restores the old handlers.
//
// Threading: at most one installed at a time per process (a signal handler can only reach
// process-wide state); Install fails with FailedPrecondition otherwise.
#ifndef SOFTWIRE_CLI_INTERRUPT_WATCHER_H_
#define SOFTWIRE_CLI_INTERRUPT_WATCHER_H_

#include <atomic>
#include <functional>
#include <memory>

#include "base/status.h"
#include "cli/signal_thread.h"

namespace softwire {
namespace cli {

class InterruptWatcher {
 public:
  // `on_signal` runs on the watcher's thread with SIGINT or SIGTERM, once per signal taken.
  static StatusOr<std::unique_ptr<InterruptWatcher>> Install(std::function<void(int)> on_signal);
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  // Blocks until the first signal has been handled; returns it.
  int Wait();
  // The first signal taken; 0 while none came.
  int signal() const { return first_signal_.load(); }

 private:
  InterruptWatcher() = default;

  std::function<void(int)> on_signal_;
  std::atomic<int> first_signal_{0};
  std::unique_ptr<SignalThread> thread_;  // Last: it calls into the members above.
};

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_INTERRUPT_WATCHER_H_
