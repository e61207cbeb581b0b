// SignalThread: signals as calls on a thread of its own, for the commands that take SIGINT and
// SIGTERM (InterruptWatcher) or SIGUSR1 (WaitStateSignal).
//
// The signal handler only writes the signal's number into a pipe (async-signal-safe), whichever
// thread the kernel picked (threads that libraries start on their own, OpenBLAS's, take signals
// too, so blocking them in one thread would not be enough). The SignalThread's thread reads the
// pipe and calls `on_signal` there, where anything may be done.
//
//   StatusOr<std::unique_ptr<SignalThread>> thread = SignalThread::Start(
//       {SIGINT, SIGTERM}, "sw:signals", [&](int signal) { server->Stop(); });
//   ...;  // destroying it restores each signal's previous disposition.
//
// Threading: a signal is watched by at most one SignalThread at a time (a handler reaches only
// process-wide state); Start fails with FailedPrecondition otherwise. Different signals may have
// SignalThreads of their own at once.
#ifndef SOFTWIRE_CLI_SIGNAL_THREAD_H_
#define SOFTWIRE_CLI_SIGNAL_THREAD_H_

#include <signal.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace softwire {
namespace cli {

class SignalThread {
 public:
  // `on_signal` runs on the thread, named `thread_name`, once per signal taken (signals that
  // come faster than it runs may be merged when the pipe is full).
  static StatusOr<std::unique_ptr<SignalThread>> Start(std::vector<int> signals,
                                                       std::string thread_name,
                                                       std::function<void(int)> on_signal);
  ~SignalThread();
  SignalThread(const SignalThread&) = delete;
  SignalThread& operator=(const SignalThread&) = delete;

 private:
  SignalThread() = default;
  void Loop();

  std::vector<int> signals_;
  std::string thread_name_;
  std::function<void(int)> on_signal_;
  int signal_read_ = -1;  // Signal numbers the handler wrote, one byte each.
  int signal_write_ = -1;
  int stop_read_ = -1;  // Closed at the destructor's start: the thread stops.
  int stop_write_ = -1;
  std::vector<struct sigaction> previous_;  // By position in signals_.
  std::thread thread_;
};

}  // namespace cli
}  // namespace softwire

#endif  // SOFTWIRE_CLI_SIGNAL_THREAD_H_
