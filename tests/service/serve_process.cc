#include "tests/service/serve_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include "base/file.h"
#include "base/npy.h"
#include "cli/testing/softwire_process.h"

namespace softwire {
namespace service_testing {
namespace {

using Clock = std::chrono::steady_clock;

std::string ReadOrEmpty(const std::string& path) {
  StatusOr<std::string> text = ReadFile(path);
  return text.ok() ? *text : std::string();
}

bool IsTerminal(proto::JobState state) {
  return state == proto::JOB_STATE_SUCCEEDED || state == proto::JOB_STATE_FAILED ||
         state == proto::JOB_STATE_CANCELLED;
}

}  // namespace

ServeProcess::ServeProcess(std::string binary, std::vector<std::string> args,
                           std::string state_directory)
    : binary_(std::move(binary)),
      args_(std::move(args)),
      state_directory_(std::move(state_directory)),
      out_path_(state_directory_ + ".out"),
      err_path_(state_directory_ + ".err") {}

ServeProcess::~ServeProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

bool ServeProcess::Start() {
  std::vector<std::string> argv = {binary_,       "serve",       "--listen",
                                   "127.0.0.1:0", "--state-dir", state_directory_};
  argv.insert(argv.end(), args_.begin(), args_.end());
  std::vector<char*> raw;
  for (std::string& arg : argv) raw.push_back(arg.data());
  raw.push_back(nullptr);
  const int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  pid_ = fork();
  if (pid_ == 0) {
    // Dies with the test, also when the test itself crashes.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out, 1);
    dup2(err, 2);
    execv(raw[0], raw.data());
    _exit(127);
  }
  close(out);
  close(err);
  const std::string marker = "softwire serve: listening on ";
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < give_up) {
    const std::string text = ReadOrEmpty(out_path_);
    const size_t at = text.find(marker);
    const size_t end = at == std::string::npos ? at : text.find('\n', at);
    if (end != std::string::npos) {
      address_ = text.substr(at + marker.size(), end - at - marker.size());
      return true;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int ServeProcess::Stop(int signal, std::chrono::seconds within) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  const Clock::time_point give_up = Clock::now() + within;
  int status = 0;
  while (Clock::now() < give_up) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
  return -1;
}

std::string ServeProcess::Output() const {
  return ReadOrEmpty(out_path_) + ReadOrEmpty(err_path_);
}

BackgroundSoftwire::BackgroundSoftwire(const std::string& binary, const std::string& args,
                                       std::string output)
    : output_(std::move(output)) {
  const int out = open(output_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const std::string command = "exec " + binary + " " + args;
  pid_ = fork();
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(out, 1);
    dup2(out, 2);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out);
}

BackgroundSoftwire::~BackgroundSoftwire() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string BackgroundSoftwire::Output() const {
  return ReadOrEmpty(output_);
}

bool BackgroundSoftwire::WaitFor(const std::string& part, double seconds) {
  const Clock::time_point give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(seconds));
  while (Clock::now() < give_up) {
    if (Output().find(part) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool BackgroundSoftwire::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

int BackgroundSoftwire::Finish(int signal, double seconds) {
  if (pid_ <= 0) return -1;
  if (signal != 0) kill(pid_, signal);
  const Clock::time_point give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(seconds));
  int status = 0;
  while (Clock::now() < give_up) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

std::string TestDirectory(const std::string& name) {
  static std::atomic<int> counter{0};
  const std::string path = ::testing::TempDir() + "/service_" + std::to_string(getpid()) + "_" +
                           std::to_string(counter++) + "_" + name;
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
  std::filesystem::create_directories(path);
  return path;
}

service::JobClientOptions ClientFor(const std::string& address, const std::string& token) {
  service::JobClientOptions options;
  options.address = address;
  options.security.token = token;
  options.deadline = std::chrono::seconds(60);
  return options;
}

proto::JobSubmission TinySubmission(int64_t steps, const std::string& key) {
  proto::JobSubmission submission;
  submission.set_job_text(cli_testing::kTinyJob);
  submission.set_file_name("tiny.pbtxt");
  submission.mutable_settings()->set_steps(steps);
  submission.set_idempotency_key(key);
  return submission;
}

proto::JobInfo WaitForState(service::JobClient* client, const std::string& job_id,
                            proto::JobState state, double seconds) {
  const Clock::time_point give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(seconds));
  proto::JobInfo last;
  while (Clock::now() < give_up) {
    StatusOr<proto::JobInfo> job = client->GetJob(job_id);
    if (job.ok()) {
      last = *job;
      if (job->state() == state || IsTerminal(job->state())) return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return last;
}

std::vector<proto::JobInfo> WaitUntilAllEnded(service::JobClient* client, double seconds) {
  const Clock::time_point give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                       std::chrono::duration<double>(seconds));
  std::vector<proto::JobInfo> jobs;
  while (Clock::now() < give_up) {
    StatusOr<std::vector<proto::JobInfo>> listed = client->ListJobs();
    if (listed.ok()) {
      jobs = *listed;
      bool all_ended = true;
      for (const proto::JobInfo& job : jobs) all_ended = all_ended && IsTerminal(job.state());
      if (all_ended) return jobs;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return jobs;
}

std::vector<proto::JobEvent> AllEvents(service::JobClient* client, const std::string& job_id,
                                       double seconds) {
  std::vector<proto::JobEvent> events;
  std::atomic<bool> done{false};
  // The watch has no deadline of its own: a watchdog stops it.
  std::thread watchdog([&] {
    const Clock::time_point give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                         std::chrono::duration<double>(seconds));
    while (!done && Clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!done) client->StopWatching();
  });
  Status watched = client->Watch(job_id, 1, [&](const proto::JobEvent& event) {
    events.push_back(event);
    return true;
  });
  done = true;
  watchdog.join();
  EXPECT_TRUE(watched.ok()) << watched;
  return events;
}

// The tiny job reading its samples from npy files beside it.
std::string WriteNpyTinyJob(const std::string& directory) {
  std::vector<float> x(64 * 4);
  std::vector<int32_t> labels(64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>((i * 7) % 3);
  EXPECT_TRUE(MakeDirectories(directory + "/data").ok());
  EXPECT_TRUE(WriteNpy(directory + "/data/x.npy", DType::kFloat32, Shape({64, 4}), x.data()).ok());
  EXPECT_TRUE(
      WriteNpy(directory + "/data/labels.npy", DType::kInt32, Shape({64}), labels.data()).ok());
  std::string job = cli_testing::kTinyJob;
  const std::string synthetic = "synthetic { seed: 7 int_high: 3 }";
  job.replace(job.find(synthetic), synthetic.size(),
              "npy { path: \"data/x.npy\" path: \"data/labels.npy\" }");
  const std::string path = directory + "/npy_tiny.pbtxt";
  EXPECT_TRUE(WriteFileAtomically(path, job).ok());
  return path;
}

// The "loss" of each line of a --metrics-out file, as written.
std::vector<std::string> MetricsLosses(const std::string& metrics_path) {
  StatusOr<std::string> text = ReadFile(metrics_path);
  EXPECT_TRUE(text.ok()) << metrics_path;
  std::vector<std::string> losses;
  std::istringstream lines(text.ok() ? *text : "");
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find("\"loss\":");
    if (at == std::string::npos) continue;
    losses.push_back(line.substr(at + 7, line.find(',', at) - at - 7));
  }
  return losses;
}

CommandOutcome RunSoftwire(const std::string& binary, const std::string& args) {
  CommandOutcome outcome;
  const std::string command = "timeout 120 " + binary + " " + args + " 2>&1";
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  size_t read = 0;
  while ((read = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    outcome.output.append(buffer, read);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  return outcome;
}

}  // namespace service_testing
}  // namespace softwire
