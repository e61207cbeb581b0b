#include "bench/common/child_process.h"

#include <fcntl.h>
#include <glog/logging.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace softwire {
namespace bench {

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

std::string SelfPath() {
  char path[4096] = {};
  CHECK_GT(readlink("/proc/self/exe", path, sizeof(path) - 1), 0);
  return path;
}

void DieWithParent() {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) _exit(1);  // The parent ended before the request.
}

ProcessPipe::ProcessPipe(std::vector<std::string> args) {
  int to_child[2];
  int from_child[2];
  CHECK_EQ(pipe2(to_child, O_CLOEXEC), 0);
  CHECK_EQ(pipe2(from_child, O_CLOEXEC), 0);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
  posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
  const int spawned = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  CHECK_EQ(spawned, 0) << "cannot start " << args[0];
  close(to_child[0]);
  close(from_child[1]);
  in_ = fdopen(to_child[1], "w");
  out_ = fdopen(from_child[0], "r");
}

ProcessPipe::~ProcessPipe() {
  fclose(in_);  // End of input: a child that reads its stdin ends by itself.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (waitpid(pid_, nullptr, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  fclose(out_);
}

void ProcessPipe::Send(const std::string& line) {
  fprintf(in_, "%s\n", line.c_str());
  fflush(in_);
}

std::string ProcessPipe::ReadLine() {
  char buffer[256] = {};
  CHECK(fgets(buffer, sizeof(buffer), out_) != nullptr) << "the child process ended";
  std::string line(buffer);
  if (!line.empty() && line.back() == '\n') line.pop_back();
  return line;
}

}  // namespace bench
}  // namespace softwire
