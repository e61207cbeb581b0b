#include "cli/signal_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <utility>

#include "base/thread_name.h"

namespace softwire {
namespace cli {
namespace {

// The write end of the pipe of the SignalThread that watches each signal; -1 for none. A signal
// handler reaches nothing but process-wide state, so this table is global.
constexpr int kSignals = 65;
std::atomic<int> signal_write[kSignals];

struct SignalTableInit {
  SignalTableInit() {
    for (std::atomic<int>& fd : signal_write) fd.store(-1);
  }
};
const SignalTableInit signal_table_init;

void OnSignal(int signal) {
  const int saved_errno = errno;
  const int fd = signal > 0 && signal < kSignals ? signal_write[signal].load() : -1;
  if (fd >= 0) {
    const char byte = static_cast<char>(signal);
    [[maybe_unused]] ssize_t written = write(fd, &byte, 1);  // Non-blocking; a full pipe drops it.
  }
  errno = saved_errno;
}

}  // namespace

StatusOr<std::unique_ptr<SignalThread>> SignalThread::Start(std::vector<int> signals,
                                                            std::string thread_name,
                                                            std::function<void(int)> on_signal) {
  std::unique_ptr<SignalThread> thread(new SignalThread());
  thread->thread_name_ = std::move(thread_name);
  thread->on_signal_ = std::move(on_signal);
  int signal_pipe[2];
  int stop_pipe[2];
  if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return UnavailableError("signals: cannot create a pipe");
  }
  if (pipe2(stop_pipe, O_CLOEXEC) != 0) {
    close(signal_pipe[0]);
    close(signal_pipe[1]);
    return UnavailableError("signals: cannot create a pipe");
  }
  thread->signal_read_ = signal_pipe[0];
  thread->signal_write_ = signal_pipe[1];
  thread->stop_read_ = stop_pipe[0];
  thread->stop_write_ = stop_pipe[1];
  for (int signal : signals) {
    int expected = -1;
    if (signal <= 0 || signal >= kSignals ||
        !signal_write[signal].compare_exchange_strong(expected, signal_pipe[1])) {
      // The destructor gives back the signals claimed so far and closes the pipes.
      return FailedPreconditionError(std::string("signal ") + strsignal(signal) +
                                     " is watched already");
    }
    thread->signals_.push_back(signal);
    struct sigaction action {};
    action.sa_handler = OnSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    thread->previous_.emplace_back();
    sigaction(signal, &action, &thread->previous_.back());
  }
  SignalThread* self = thread.get();
  thread->thread_ = std::thread([self] { self->Loop(); });
  return thread;
}

SignalThread::~SignalThread() {
  for (size_t index = 0; index < signals_.size(); ++index) {
    sigaction(signals_[index], &previous_[index], nullptr);
    signal_write[signals_[index]].store(-1);
  }
  close(stop_write_);  // The thread sees end-of-file on its stop pipe.
  if (thread_.joinable()) thread_.join();
  for (int fd : {stop_read_, signal_read_, signal_write_}) close(fd);
}

void SignalThread::Loop() {
  NameCurrentThread(thread_name_);
  while (true) {
    pollfd fds[2] = {{signal_read_, POLLIN, 0}, {stop_read_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    char taken[16];
    const ssize_t got = read(signal_read_, taken, sizeof(taken));
    for (ssize_t index = 0; index < got; ++index) on_signal_(taken[index]);
  }
}

}  // namespace cli
}  // namespace softwire
