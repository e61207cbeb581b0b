#include "cli/interrupt_watcher.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>

#include "base/thread_name.h"

namespace softwire {
namespace cli {
namespace {

// The write end of the signal pipe. A signal handler reaches nothing but process-wide state,
// so this one is global; -1 while no InterruptWatcher is installed.
std::atomic<int> signal_write{-1};

void OnSignal(int signal) {
  const int saved_errno = errno;
  const int fd = signal_write.load();
  if (fd >= 0) {
    const char byte = static_cast<char>(signal);
    [[maybe_unused]] ssize_t written = write(fd, &byte, 1);  // Non-blocking; a full pipe drops it.
  }
  errno = saved_errno;
}

}  // namespace

StatusOr<std::unique_ptr<InterruptWatcher>> InterruptWatcher::Install(
    std::function<void(int)> on_signal) {
  std::unique_ptr<InterruptWatcher> watcher(new InterruptWatcher());
  watcher->on_signal_ = std::move(on_signal);
  int signal_pipe[2];
  int stop_pipe[2];
  if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return UnavailableError("SIGINT/SIGTERM: cannot create a pipe");
  }
  if (pipe2(stop_pipe, O_CLOEXEC) != 0) {
    close(signal_pipe[0]);
    close(signal_pipe[1]);
    return UnavailableError("SIGINT/SIGTERM: cannot create a pipe");
  }
  int expected = -1;
  if (!signal_write.compare_exchange_strong(expected, signal_pipe[1])) {
    for (int fd : {signal_pipe[0], signal_pipe[1], stop_pipe[0], stop_pipe[1]}) close(fd);
    return FailedPreconditionError("SIGINT and SIGTERM are watched already");
  }
  watcher->signal_read_ = signal_pipe[0];
  watcher->stop_read_ = stop_pipe[0];
  watcher->stop_write_ = stop_pipe[1];
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &watcher->previous_interrupt_);
  sigaction(SIGTERM, &action, &watcher->previous_terminate_);
  InterruptWatcher* self = watcher.get();
  watcher->thread_ = std::thread([self] { self->Loop(); });
  return watcher;
}

InterruptWatcher::~InterruptWatcher() {
  sigaction(SIGINT, &previous_interrupt_, nullptr);
  sigaction(SIGTERM, &previous_terminate_, nullptr);
  const int fd = signal_write.exchange(-1);
  close(stop_write_);  // The thread sees end-of-file on its stop pipe.
  if (thread_.joinable()) thread_.join();
  close(stop_read_);
  close(signal_read_);
  if (fd >= 0) close(fd);
}

int InterruptWatcher::Wait() {
  while (first_signal_.load() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return first_signal_.load();
}

void InterruptWatcher::Loop() {
  NameCurrentThread("sw:signals");
  while (true) {
    pollfd fds[2] = {{signal_read_, POLLIN, 0}, {stop_read_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    char signals[16];
    const ssize_t got = read(signal_read_, signals, sizeof(signals));
    for (ssize_t i = 0; i < got; ++i) {
      int expected = 0;
      first_signal_.compare_exchange_strong(expected, signals[i]);
      on_signal_(signals[i]);
    }
  }
}

}  // namespace cli
}  // namespace softwire
