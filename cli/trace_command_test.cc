// `softwire run --trace`, `softwire trace`, `kill -USR1` and `softwire diagnose`, run as a user
// would run them. Every child process has a time bound; a job left running is killed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "base/file.h"
#include "cli/testing/softwire_process.h"
#include "trace/chrome_trace.h"

namespace softwire {
namespace {

using cli_testing::Contains;
using cli_testing::kTinyJob;
using cli_testing::Outcome;

using Clock = std::chrono::steady_clock;

// Runs `softwire ARGS` with a 60 s bound (cli/testing/softwire_process.h).
Outcome RunSoftwire(const std::string& args) {
  return cli_testing::RunSoftwire(SOFTWIRE_BINARY, args);
}

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/trace_cli_" + name;
}

std::string TinyJob(const std::string& name) {
  std::string path = TempPath(name);
  EXPECT_TRUE(WriteFileAtomically(path, kTinyJob).ok());
  return path;
}

// A `softwire run` in the background, its stdout and stderr going to files. Killed (SIGKILL)
// when destroyed if still running.
class BackgroundRun {
 public:
  BackgroundRun(const std::string& args, const std::string& name)
      : out_(TempPath(name + ".out")), err_(TempPath(name + ".err")) {
    // Emptied before the child starts, so nothing of an earlier run is read back.
    EXPECT_TRUE(WriteFileAtomically(out_, "").ok());
    EXPECT_TRUE(WriteFileAtomically(err_, "").ok());
    pid_ = fork();
    if (pid_ == 0) {
      int out = open(out_.c_str(), O_WRONLY | O_TRUNC, 0644);
      int err = open(err_.c_str(), O_WRONLY | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(err, 2);
      std::string command = std::string("exec ") + SOFTWIRE_BINARY + " " + args;
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~BackgroundRun() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  pid_t pid() const { return pid_; }
  std::string Out() const { return Read(out_); }
  std::string Err() const { return Read(err_); }
  bool Alive() {
    if (exited_) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) exited_ = true;
    return !exited_;
  }
  // Waits up to `seconds` until `part` appears in stdout (or stderr); false when it did not.
  bool WaitFor(const std::string& part, bool in_stderr, double seconds) {
    Clock::time_point give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                   std::chrono::duration<double>(seconds));
    while (Clock::now() < give_up) {
      if (Contains(in_stderr ? Err() : Out(), part)) return true;
      if (!Alive()) return Contains(in_stderr ? Err() : Out(), part);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

 private:
  static std::string Read(const std::string& path) {
    StatusOr<std::string> text = ReadFile(path);
    return text.ok() ? *text : std::string();
  }

  std::string out_;
  std::string err_;
  pid_t pid_ = -1;
  bool exited_ = false;
};

size_t Count(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST(TraceCommandTest, RunWritesTheTraceItsSummaryAndItsTimelineAndTraceReadsThemBack) {
  const std::string trace = TempPath("run.trace.json");
  for (const char* suffix : {"", ".summary.txt", ".svg"}) std::remove((trace + suffix).c_str());
  Outcome run = RunSoftwire("run " + TinyJob("tiny.pbtxt") + " --steps 6 --trace " + trace);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(Contains(run.output, "trace: " + trace + " (")) << run.output;

  StatusOr<trace::TraceModel> model = trace::ReadChromeTrace(trace);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->plan.job_name, "tiny");
  EXPECT_EQ(model->info.engine, "caf-runtime");
  EXPECT_EQ(model->plan.steps, 6);
  EXPECT_GT(model->firings.size(), 6u * 2);

  StatusOr<std::string> summary_file = ReadFile(trace + ".summary.txt");
  ASSERT_TRUE(summary_file.ok());
  Outcome summary = RunSoftwire("trace summary " + trace);
  ASSERT_EQ(summary.exit_code, 0) << summary.output;
  EXPECT_EQ(summary.output, *summary_file) << "the summary beside the trace is the summary";
  for (const char* part :
       {"trace of job 'tiny'", "devices: utilization", "actors: share",
        "critical path:", "bottleneck: actor '", "pipeline bubble:", "memory high-water"}) {
    EXPECT_TRUE(Contains(summary.output, part)) << part << "\n" << summary.output;
  }

  StatusOr<std::string> svg = ReadFile(trace + ".svg");
  ASSERT_TRUE(svg.ok());
  EXPECT_EQ(Count(*svg, "<rect "), model->firings.size());

  const std::string html = TempPath("report.html");
  Outcome render = RunSoftwire("trace render " + trace + " -o " + html);
  ASSERT_EQ(render.exit_code, 0) << render.output;
  StatusOr<std::string> page = ReadFile(html);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(Contains(*page, "<svg") && Contains(*page, "<h2>Actors</h2>"));
  Outcome render_svg = RunSoftwire("trace render " + trace + " --output " + TempPath("t.svg"));
  EXPECT_EQ(render_svg.exit_code, 0) << render_svg.output;

  Outcome check = RunSoftwire("trace check " + trace);
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_TRUE(Contains(check.output, ": ok: ")) << check.output;
}

TEST(TraceCommandTest, TraceStepsRecordsOnlyThoseSteps) {
  const std::string trace = TempPath("window.trace.json");
  Outcome run = RunSoftwire("run " + TinyJob("window.pbtxt") +
                            " --quiet --steps 8 --trace-steps 2:4 --trace " + trace);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  StatusOr<trace::TraceModel> model = trace::ReadChromeTrace(trace);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->info.window.ToString(), "2:4");
  ASSERT_FALSE(model->firings.empty());
  for (const trace::FiringRecord& firing : model->firings) {
    EXPECT_GE(model->StepOf(firing), 2);
    EXPECT_LT(model->StepOf(firing), 4);
  }
}

TEST(TraceCommandTest, BadTraceFilesExitWithTwoNamingTheFile) {
  const std::string garbage = TempPath("garbage.json");
  const std::string foreign = TempPath("foreign.json");
  const std::string cut = TempPath("cut.json");
  ASSERT_TRUE(WriteFileAtomically(garbage, "this is no trace").ok());
  ASSERT_TRUE(WriteFileAtomically(foreign, "{\"traceEvents\": []}").ok());
  const std::string whole = TempPath("whole.trace.json");
  ASSERT_EQ(RunSoftwire("run " + TinyJob("whole.pbtxt") + " --quiet --trace " + whole).exit_code,
            0);
  StatusOr<std::string> text = ReadFile(whole);
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(WriteFileAtomically(cut, text->substr(0, text->size() / 2)).ok());
  for (const std::string& file : {TempPath("missing.json"), garbage, foreign, cut}) {
    for (const std::string command : {"trace summary ", "trace check "}) {
      // A foreign but well-formed Chrome trace passes the format check; only our tools need
      // our otherData.
      if (file == foreign && command == "trace check ") continue;
      Outcome outcome = RunSoftwire(command + file);
      EXPECT_EQ(outcome.exit_code, 2) << command << file << "\n" << outcome.output;
      EXPECT_TRUE(Contains(outcome.output, file)) << outcome.output;
    }
    Outcome render = RunSoftwire("trace render " + file + " -o " + TempPath("bad.svg"));
    EXPECT_EQ(render.exit_code, 2) << render.output;
    EXPECT_TRUE(Contains(render.output, file)) << render.output;
  }
  EXPECT_EQ(RunSoftwire("trace render " + whole + " -o " + TempPath("x.png")).exit_code, 2);
  EXPECT_EQ(RunSoftwire("trace frobnicate " + whole).exit_code, 2);
}

TEST(TraceCommandTest, TraceFlagsAreCheckedBeforeTheRun) {
  const std::string job = TinyJob("flags.pbtxt");
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c :
       {Case{"--trace-steps 1:2", "need --trace FILE"},
        Case{"--trace " + TempPath("f.json") + " --trace-steps 3:1", "--trace-steps"},
        Case{"--trace " + TempPath("f.json") + " --trace-cap 0", "--trace-cap"},
        Case{"--trace /nonexistent/dir/t.json", "--trace: cannot write into"},
        Case{"--listen 0.0.0.0:0", "loopback"}}) {
    Outcome outcome = RunSoftwire("run " + job + " " + c.args);
    EXPECT_EQ(outcome.exit_code, 2) << c.args << "\n" << outcome.output;
    EXPECT_TRUE(Contains(outcome.output, c.message)) << c.args << "\n" << outcome.output;
    EXPECT_FALSE(Contains(outcome.output, "step 1/")) << outcome.output;
  }
}

TEST(TraceCommandTest, SigUsr1PrintsWhatEachActorWaitsForAndTheJobGoesOn) {
  BackgroundRun run("run " + TinyJob("usr1.pbtxt") + " --steps 1000000 --log-every 1000", "usr1");
  // The first step line, not the header: the header is printed just before the job starts,
  // and a signal in between is answered "job 'tiny' is not running".
  ASSERT_TRUE(run.WaitFor("step       1/", /*in_stderr=*/false, 20)) << run.Out() << run.Err();
  ASSERT_EQ(kill(run.pid(), SIGUSR1), 0);
  ASSERT_TRUE(run.WaitFor("wait states of job 'tiny' after ", /*in_stderr=*/true, 30)) << run.Err();
  ASSERT_TRUE(run.WaitFor(" firings completed:", /*in_stderr=*/true, 5)) << run.Err();
  const std::string report = run.Err();
  EXPECT_TRUE(Contains(report, "actor 'data' (source) on node0/cpu:0 at firing ")) << report;
  EXPECT_TRUE(Contains(report, "(compute) on node0/cpu:0 at firing ")) << report;
  // Still running, and still making progress.
  const std::string before = run.Out();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_TRUE(run.Alive()) << run.Err();
  ASSERT_EQ(kill(run.pid(), SIGUSR1), 0);
  EXPECT_TRUE(run.WaitFor("", true, 1));
  Clock::time_point give_up = Clock::now() + std::chrono::seconds(10);
  while (Count(run.Err(), "wait states of job") < 2 && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(Count(run.Err(), "wait states of job"), 2u) << run.Err();
  EXPECT_TRUE(run.Alive());
}

TEST(TraceCommandTest, DiagnoseAsksARunningJobOverLoopbackGrpc) {
  BackgroundRun run(
      "run " + TinyJob("listen.pbtxt") + " --steps 1000000 --quiet --listen 127.0.0.1:0", "listen");
  ASSERT_TRUE(run.WaitFor("softwire run: diagnostics on 127.0.0.1:", /*in_stderr=*/true, 20))
      << run.Err();
  const std::string err = run.Err();
  const size_t at = err.find("127.0.0.1:");
  const std::string address = err.substr(at, err.find(' ', at) - at);
  // The address is printed just before the job starts; until it runs, the answer is "job
  // 'tiny' is not running" (exit 1), so ask again then.
  Outcome diagnose = RunSoftwire("diagnose " + address + " --timeout 10 --clock 4");
  for (int attempt = 0;
       attempt < 20 && diagnose.exit_code == 1 && Contains(diagnose.output, "is not running");
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    diagnose = RunSoftwire("diagnose " + address + " --timeout 10 --clock 4");
  }
  ASSERT_EQ(diagnose.exit_code, 0) << diagnose.output;
  EXPECT_TRUE(Contains(diagnose.output, "wait states of job 'tiny' after ")) << diagnose.output;
  EXPECT_TRUE(Contains(diagnose.output, "actor 'fc' (compute) on node0/cpu:0 at firing "))
      << diagnose.output;
  EXPECT_TRUE(Contains(diagnose.output, "clock offset of " + address + ": ")) << diagnose.output;
  EXPECT_TRUE(run.Alive()) << "asking does not stop the job";

  // Nothing listens once the job is gone: the answer is a quick failure, not a hang.
  kill(run.pid(), SIGKILL);
  while (run.Alive()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  Clock::time_point start = Clock::now();
  Outcome gone = RunSoftwire("diagnose " + address + " --timeout 2");
  EXPECT_EQ(gone.exit_code, 1) << gone.output;
  EXPECT_TRUE(Contains(gone.output, address)) << gone.output;
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
  EXPECT_EQ(RunSoftwire("diagnose").exit_code, 2);
  EXPECT_EQ(RunSoftwire("diagnose " + address + " --timeout -1").exit_code, 2);
}

}  // namespace
}  // namespace softwire
