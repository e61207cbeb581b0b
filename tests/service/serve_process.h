// Helpers for the job service's tests: a real `softwire serve` process on a free loopback port
// with a state directory of the test's, ended in every case, and the jobs the tests submit.
//
//   ServeProcess server(SOFTWIRE_BINARY, {"--cluster", "1cpu"}, TestDirectory("restart"));
//   ASSERT_TRUE(server.Start()) << server.Output();
//   service::JobClient client(ClientFor(server.address()));
//   ...; server.Kill(SIGKILL);   // or nothing: the destructor stops it.
#ifndef SOFTWIRE_TESTS_SERVICE_SERVE_PROCESS_H_
#define SOFTWIRE_TESTS_SERVICE_SERVE_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "proto/jobs.pb.h"
#include "service/rpc/job_client.h"

namespace softwire {
namespace service_testing {

// A `softwire serve --listen 127.0.0.1:0 --state-dir STATE ARGS...` process, its stdout and
// stderr in files beside the state directory. The destructor kills it (SIGKILL) if it still
// runs, and it gets SIGKILL when the test process dies, so no test leaves one behind.
class ServeProcess {
 public:
  ServeProcess(std::string binary, std::vector<std::string> args, std::string state_directory);
  ~ServeProcess();
  ServeProcess(const ServeProcess&) = delete;
  ServeProcess& operator=(const ServeProcess&) = delete;

  // Starts it and waits up to 30 s for its "listening on ADDR" line. False when it exited or
  // did not say it; Output() says why.
  bool Start();
  // "127.0.0.1:PORT" once started.
  const std::string& address() const { return address_; }
  pid_t pid() const { return pid_; }

  // Sends `signal` and waits up to `within` for the exit; the exit status as waitpid gives it
  // (-1 when it had to be killed).
  int Stop(int signal, std::chrono::seconds within = std::chrono::seconds(20));
  // What it printed so far, stdout then stderr.
  std::string Output() const;

 private:
  const std::string binary_;
  const std::vector<std::string> args_;
  const std::string state_directory_;
  const std::string out_path_;
  const std::string err_path_;
  pid_t pid_ = -1;
  std::string address_;
};

// `softwire ARGS` (a shell command line after the binary) in the background, stdout and stderr
// into `output`. Killed (SIGKILL) when destroyed if still running, and when the test dies.
class BackgroundSoftwire {
 public:
  BackgroundSoftwire(const std::string& binary, const std::string& args, std::string output);
  ~BackgroundSoftwire();
  BackgroundSoftwire(const BackgroundSoftwire&) = delete;
  BackgroundSoftwire& operator=(const BackgroundSoftwire&) = delete;

  std::string Output() const;
  // Waits up to `seconds` until `part` is in the output; false when it did not come.
  bool WaitFor(const std::string& part, double seconds);
  // Sends `signal` (0: none) and waits up to `seconds` for the exit; its exit code, or -1 when
  // it did not exit normally in time.
  int Finish(int signal, double seconds);
  // The process (the shell execs softwire, so it is softwire's); -1 once it was reaped.
  pid_t pid() const { return pid_; }
  // Whether it still runs (not reaped and not a zombie).
  bool Running();

 private:
  const std::string output_;
  pid_t pid_ = -1;
};

// A loopback port nothing listens on now (bound, then let go).
int FreeLoopbackPort();

// A fresh, empty directory for one test under the test temp directory.
std::string TestDirectory(const std::string& name);

// A client for a test server: short deadlines, no TLS, `token` on every call.
service::JobClientOptions ClientFor(const std::string& address, const std::string& token = "");

// The tiny job (cli/testing) as a submission: `steps` steps (0: its 4), named `file_name`.
proto::JobSubmission TinySubmission(int64_t steps, const std::string& key = "");

// Polls GetJob until the job is in `state` or in a terminal state, for up to `seconds`.
proto::JobInfo WaitForState(service::JobClient* client, const std::string& job_id,
                            proto::JobState state, double seconds);

// Polls until every job listed is terminal, for up to `seconds`; the list at the end.
std::vector<proto::JobInfo> WaitUntilAllEnded(service::JobClient* client, double seconds);

// Every event of the job, from 1 to its terminal one (bounded by `seconds`).
std::vector<proto::JobEvent> AllEvents(service::JobClient* client, const std::string& job_id,
                                       double seconds = 60);

// The tiny job reading its samples from npy files it writes beside it (DIR/data/*.npy); the
// job file's path (DIR/npy_tiny.pbtxt).
std::string WriteNpyTinyJob(const std::string& directory);

// The "loss" of each line of a --metrics-out file, as written.
std::vector<std::string> MetricsLosses(const std::string& metrics_path);

// Runs `softwire ARGS` (a shell command line after the binary) with a 120 s bound; stdout and
// stderr together.
struct CommandOutcome {
  int exit_code = -1;
  std::string output;
};
CommandOutcome RunSoftwire(const std::string& binary, const std::string& args);

}  // namespace service_testing
}  // namespace softwire

#endif  // SOFTWIRE_TESTS_SERVICE_SERVE_PROCESS_H_
