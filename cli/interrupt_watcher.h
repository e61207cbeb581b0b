// InterruptWatcher: SIGINT and SIGTERM as events on a thread of their own, for the commands that
// stay up until stopped (`softwire serve`) or follow a job (`softwire submit`, `watch`).
//
// The signal handler only writes the signal's number into a pipe (async-signal-safe), whichever
// thread the kernel picked (threads that libraries start on their own, OpenBLAS's, take signals
// too, so blocking them in this thread would not be enough). The watcher's thread reads the pipe
// and calls `on_signal` there, where anything may be done.
//
//   StatusOr<std::unique_ptr<InterruptWatcher>> interrupts =
//       InterruptWatcher::Install([&](int signal) { client.StopWatching(); });
//   ...;  (*interrupts)->Wait();  // Or not: the destructor restores the old handlers.
//
// Threading: at most one installed at a time per process (a signal handler can only reach
// process-wide state); Install fails with FailedPrecondition otherwise.
#ifndef SOFTWIRE_CLI_INTERRUPT_WATCHER_H_
#define SOFTWIRE_CLI_INTERRUPT_WATCHER_H_

#include <signal.h>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "base/status.h"

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
  void Loop();

  std::function<void(int)> on_signal_;
  int signal_read_ = -1;  // Signal numbers the handler wrote, one byte each.
  int stop_read_ = -1;    // Closed at the destructor's start: the thread stops.
  int stop_write_ = -1;
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
  std::atomic<int> first_signal_{0};
  std::thread thread_;
};

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_INTERRUPT_WATCHER_H_
