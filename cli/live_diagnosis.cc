#include "cli/live_diagnosis.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "base/thread_name.h"

namespace softwire {
namespace cli {
namespace {

// The write end of the signal pipe. A signal handler reaches nothing but process-wide state,
// so this one is global; -1 while no WaitStateSignal is installed.
std::atomic<int> signal_write{-1};

void OnSignal(int) {
  const int saved_errno = errno;
  const int fd = signal_write.load();
  if (fd >= 0) {
    const char byte = 1;
    [[maybe_unused]] ssize_t written = write(fd, &byte, 1);  // Non-blocking; a full pipe drops it.
  }
  errno = saved_errno;
}

}  // namespace

StatusOr<std::unique_ptr<WaitStateSignal>> WaitStateSignal::Install(
    std::function<std::string()> report) {
  std::unique_ptr<WaitStateSignal> installed(new WaitStateSignal());
  installed->report_ = std::move(report);
  int signal_pipe[2];
  int stop_pipe[2];
  if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    return UnavailableError("SIGUSR1 report: cannot create a pipe");
  }
  if (pipe2(stop_pipe, O_CLOEXEC) != 0) {
    close(signal_pipe[0]);
    close(signal_pipe[1]);
    return UnavailableError("SIGUSR1 report: cannot create a pipe");
  }
  int expected = -1;
  if (!signal_write.compare_exchange_strong(expected, signal_pipe[1])) {
    for (int fd : {signal_pipe[0], signal_pipe[1], stop_pipe[0], stop_pipe[1]}) close(fd);
    return FailedPreconditionError("a SIGUSR1 report is already installed");
  }
  installed->signal_read_ = signal_pipe[0];
  installed->stop_read_ = stop_pipe[0];
  installed->stop_write_ = stop_pipe[1];
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, &installed->previous_);
  WaitStateSignal* self = installed.get();
  installed->thread_ = std::thread([self] { self->Loop(); });
  return installed;
}

WaitStateSignal::~WaitStateSignal() {
  sigaction(SIGUSR1, &previous_, nullptr);
  const int fd = signal_write.exchange(-1);
  close(stop_write_);  // The thread sees end-of-file on its stop pipe.
  if (thread_.joinable()) thread_.join();
  close(stop_read_);
  close(signal_read_);
  if (fd >= 0) close(fd);
}

void WaitStateSignal::Loop() {
  NameCurrentThread("sw:diagnose");
  while (true) {
    pollfd fds[2] = {{signal_read_, POLLIN, 0}, {stop_read_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    char bytes[64];
    while (read(signal_read_, bytes, sizeof(bytes)) > 0) {
      // Several signals at once make one report.
    }
    const std::string text = report_();
    std::fprintf(stderr, "%s\n", text.c_str());
    std::fflush(stderr);
  }
}

}  // namespace cli
}  // namespace softwire
