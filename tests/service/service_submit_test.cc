// `softwire submit` against a real `softwire serve`: the same per-step losses as `softwire run`
// of the same job (its npy data uploaded), then watch, jobs, fetch and diagnose on the server.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "base/npy.h"
#include "cli/testing/softwire_process.h"
#include "service/rpc/job_client.h"
#include "tests/service/serve_process.h"

namespace softwire {
namespace {

using cli_testing::Contains;
using service_testing::ClientFor;
using service_testing::CommandOutcome;
using service_testing::ServeProcess;
using service_testing::TestDirectory;

CommandOutcome Softwire(const std::string& args) {
  return service_testing::RunSoftwire(SOFTWIRE_BINARY, args);
}

TEST(ServiceCommandsTest, HaveHelpAndRefuseBadCommandLinesWithTwo) {
  for (const char* command : {"serve", "submit", "jobs", "watch", "cancel", "fetch", "node"}) {
    CommandOutcome help = Softwire(std::string("help ") + command);
    EXPECT_EQ(help.exit_code, 0) << command << "\n" << help.output;
    EXPECT_TRUE(Contains(help.output, std::string("usage: softwire ") + command)) << help.output;
    EXPECT_TRUE(Contains(help.output, "exit codes:")) << help.output;
  }
  struct Case {
    std::string args;
    std::string message;
  };
  for (const Case& c :
       {Case{"submit", "no job file given"}, Case{"watch", "no job id given"},
        Case{"serve --tls-cert a.pem", "--tls-cert and --tls-key go together"},
        Case{"serve extra", "takes no operand"}, Case{"node", "--join ADDR is required"},
        Case{"serve --nodes 2 --cluster 2cpu", "--cluster and --nodes go apart"},
        Case{"node --join 127.0.0.1:1 --devices 2x1cpu", "a node hosts the devices of one node"},
        Case{"jobs --limit -1", "--limit must be >= 0"},
        Case{"node --join 127.0.0.1:1 --caf-threads -1", "--caf-threads must be >= 0"},
        Case{"submit x.pbtxt --token-file /nonexistent/token", "--token-file"},
        Case{"submit x.pbtxt --detach --metrics-out m.jsonl", "--detach"}}) {
    CommandOutcome outcome = Softwire(c.args);
    EXPECT_EQ(outcome.exit_code, 2) << c.args << "\n" << outcome.output;
    EXPECT_TRUE(Contains(outcome.output, c.message)) << c.args << "\n" << outcome.output;
  }
  // A job file that is not there: what `softwire run` says.
  CommandOutcome run_missing = Softwire("run /nonexistent/job.pbtxt");
  CommandOutcome submit_missing = Softwire("submit /nonexistent/job.pbtxt");
  EXPECT_EQ(submit_missing.exit_code, 2) << submit_missing.output;
  EXPECT_EQ(submit_missing.output.substr(submit_missing.output.find(':')),
            run_missing.output.substr(run_missing.output.find(':')));
  // Nothing listens: the client says where it tried, exit 1.
  const std::string nowhere = "127.0.0.1:" + std::to_string(service_testing::FreeLoopbackPort());
  CommandOutcome unreachable = Softwire("jobs --to " + nowhere);
  EXPECT_EQ(unreachable.exit_code, 1) << unreachable.output;
  EXPECT_TRUE(Contains(unreachable.output, nowhere)) << unreachable.output;
}

class SubmitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = TestDirectory("submit");
    server_ = std::make_unique<ServeProcess>(
        SOFTWIRE_BINARY, std::vector<std::string>{"--cluster", "1cpu"}, directory_ + "/state");
    ASSERT_TRUE(server_->Start()) << server_->Output();
    to_ = " --to " + server_->address();
  }
  void TearDown() override {
    if (server_ != nullptr) {
      const int status = server_->Stop(SIGTERM);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "SIGTERM stops the server cleanly\n"
          << server_->Output();
    }
  }

  std::string directory_;
  std::unique_ptr<ServeProcess> server_;
  std::string to_;
};

TEST_F(SubmitTest, ASubmittedJobGivesTheSameLossesAsRunAndItsResultsCanBeFetched) {
  const std::string job = service_testing::WriteNpyTinyJob(directory_);
  const std::string run_metrics = directory_ + "/run.jsonl";
  const std::string submit_metrics = directory_ + "/submit.jsonl";
  CommandOutcome run =
      Softwire("run " + job + " --cluster 1cpu --steps 8 --metrics-out " + run_metrics);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  CommandOutcome submit =
      Softwire("submit " + job + to_ + " --steps 8 --trace --metrics-out " + submit_metrics);
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  // Not a terminal: the lines `softwire run` prints.
  EXPECT_TRUE(Contains(submit.output, "step 1/8  loss ")) << submit.output;
  EXPECT_TRUE(Contains(submit.output, "done: 8 steps")) << submit.output;
  const std::vector<std::string> run_losses = service_testing::MetricsLosses(run_metrics);
  ASSERT_EQ(run_losses.size(), 8u);
  EXPECT_EQ(service_testing::MetricsLosses(submit_metrics), run_losses);

  // The job as the server lists it, watched again, and what it made.
  CommandOutcome jobs = Softwire("jobs" + to_);
  ASSERT_EQ(jobs.exit_code, 0) << jobs.output;
  EXPECT_TRUE(Contains(jobs.output, "job-")) << jobs.output;
  EXPECT_TRUE(Contains(jobs.output, "SUCCEEDED")) << jobs.output;
  service::JobClient client(ClientFor(server_->address()));
  StatusOr<std::vector<proto::JobInfo>> listed = client.ListJobs();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  const std::string id = listed->front().job_id();
  const std::string watch_metrics = directory_ + "/watch.jsonl";
  CommandOutcome watch = Softwire("watch " + id + to_ + " --metrics-out " + watch_metrics);
  ASSERT_EQ(watch.exit_code, 0) << watch.output;
  EXPECT_EQ(service_testing::MetricsLosses(watch_metrics), run_losses);

  const std::string saved = directory_ + "/saved";
  const std::string trace = directory_ + "/trace.json";
  const std::string fetched_metrics = directory_ + "/fetched.jsonl";
  CommandOutcome fetch = Softwire("fetch " + id + to_ + " --save " + saved + " --trace " + trace +
                                  " --metrics-out " + fetched_metrics);
  ASSERT_EQ(fetch.exit_code, 0) << fetch.output;
  EXPECT_EQ(service_testing::MetricsLosses(fetched_metrics), run_losses);
  StatusOr<NpyArray> w = ReadNpy(saved + "/w.npy");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->shape, Shape({4, 3}));
  StatusOr<std::string> trace_text = ReadFile(trace);
  ASSERT_TRUE(trace_text.ok());
  EXPECT_TRUE(Contains(*trace_text, "traceEvents")) << trace_text->substr(0, 200);
  EXPECT_TRUE(ReadFile(trace + ".summary.txt").ok());
  // The timeline, drawn by fetch from the fetched trace as `run --trace` draws it.
  StatusOr<std::string> timeline = ReadFile(trace + ".svg");
  ASSERT_TRUE(timeline.ok()) << timeline.status();
  EXPECT_TRUE(Contains(*timeline, "<svg")) << timeline->substr(0, 200);

  // An unknown job is bad input naming it.
  CommandOutcome unknown = Softwire("watch job-999" + to_);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_TRUE(Contains(unknown.output, "job-999")) << unknown.output;
}

TEST_F(SubmitTest, RunsSettingsReachTheServedJobBf16Included) {
  // --precision bf16 (and the memory switches) change the plan; served, it trains as `run` does
  // with the same flags. On a cpu without native bf16 both take the same float32 fallback.
  const std::string job = service_testing::WriteNpyTinyJob(directory_);
  const std::string flags = " --steps 6 --precision bf16 --no-views --no-in-place";
  const std::string run_metrics = directory_ + "/run_bf16.jsonl";
  const std::string submit_metrics = directory_ + "/submit_bf16.jsonl";
  const std::string float32_metrics = directory_ + "/submit_float32.jsonl";
  CommandOutcome run =
      Softwire("run " + job + " --cluster 1cpu" + flags + " --metrics-out " + run_metrics);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  CommandOutcome submit =
      Softwire("submit " + job + to_ + flags + " --metrics-out " + submit_metrics);
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  CommandOutcome float32 =
      Softwire("submit " + job + to_ + " --steps 6 --metrics-out " + float32_metrics);
  ASSERT_EQ(float32.exit_code, 0) << float32.output;
  const std::vector<std::string> run_losses = service_testing::MetricsLosses(run_metrics);
  ASSERT_EQ(run_losses.size(), 6u);
  EXPECT_EQ(service_testing::MetricsLosses(submit_metrics), run_losses);
  EXPECT_NE(service_testing::MetricsLosses(float32_metrics), run_losses)
      << "bf16 rounds the products' inputs";

  CommandOutcome bad = Softwire("submit " + job + to_ + " --precision half");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(Contains(bad.output, "--precision must be float32, bf16 or auto, not 'half'"))
      << bad.output;
}

TEST_F(SubmitTest, CheckpointsOfAServedJobAreEventsAndResumeWithRun) {
  const std::string job = service_testing::WriteNpyTinyJob(directory_);
  const std::string run_metrics = directory_ + "/run8.jsonl";
  CommandOutcome run =
      Softwire("run " + job + " --cluster 1cpu --steps 8 --metrics-out " + run_metrics);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  CommandOutcome submit =
      Softwire("submit " + job + to_ + " --steps 6 --checkpoint-every 3 --keep-checkpoints 1");
  ASSERT_EQ(submit.exit_code, 0) << submit.output;
  EXPECT_TRUE(Contains(submit.output, "checkpoint after step 6: checkpoints/step-00000006"))
      << submit.output;
  // The last checkpoint lies in the job's results on the server; `run --resume` continues it.
  std::string checkpoints;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(directory_ + "/state")) {
    if (entry.path().filename() == "checkpoints") checkpoints = entry.path().string();
  }
  ASSERT_FALSE(checkpoints.empty()) << "no checkpoints folder under the state directory";
  EXPECT_FALSE(std::filesystem::exists(checkpoints + "/step-00000003")) << "only 1 is kept";
  const std::string resumed_metrics = directory_ + "/resumed.jsonl";
  CommandOutcome resumed = Softwire("run " + job + " --cluster 1cpu --steps 8 --resume " +
                                    checkpoints + " --metrics-out " + resumed_metrics);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const std::vector<std::string> all = service_testing::MetricsLosses(run_metrics);
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(service_testing::MetricsLosses(resumed_metrics),
            std::vector<std::string>(all.begin() + 6, all.end()));

  CommandOutcome bad = Softwire("submit " + job + to_ + " --keep-checkpoints 2");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(Contains(bad.output, "--keep-checkpoints needs --checkpoint-every")) << bad.output;
}

TEST_F(SubmitTest, DetachPrintsTheIdAndAFailedJobExitsWithOneAndItsError) {
  const std::string job = directory_ + "/tiny.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(job, cli_testing::kTinyJob).ok());
  CommandOutcome detached = Softwire("submit " + job + to_ + " --detach");
  ASSERT_EQ(detached.exit_code, 0) << detached.output;
  EXPECT_EQ(detached.output.rfind("job-", 0), 0u) << detached.output;

  std::string bad_labels = cli_testing::kTinyJob;  // Labels up to 9 for 3 classes.
  bad_labels.replace(bad_labels.find("int_high: 3"), 11, "int_high: 10");
  const std::string failing = directory_ + "/bad_labels.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(failing, bad_labels).ok());
  CommandOutcome failed = Softwire("submit " + failing + to_);
  EXPECT_EQ(failed.exit_code, 1) << failed.output;
  EXPECT_TRUE(Contains(failed.output, "failed: ")) << failed.output;
  EXPECT_TRUE(Contains(failed.output, "actor 'xent")) << failed.output;
}

TEST_F(SubmitTest, DiagnoseAsksARunningServedJobWhatItsActorsWaitFor) {
  service::JobClient client(ClientFor(server_->address()));
  StatusOr<proto::SubmitJobResponse> submitted =
      client.Submit(service_testing::TinySubmission(10000000));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const std::string id = submitted->job().job_id();
  ASSERT_EQ(service_testing::WaitForState(&client, id, proto::JOB_STATE_RUNNING, 30).state(),
            proto::JOB_STATE_RUNNING);
  // Running, its actors may not all have started: ask again for a few seconds.
  CommandOutcome diagnose;
  for (int attempt = 0; attempt < 50; ++attempt) {
    diagnose = Softwire("diagnose " + server_->address() + " --job " + id);
    if (diagnose.exit_code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(diagnose.exit_code, 0) << diagnose.output;
  EXPECT_TRUE(Contains(diagnose.output, "wait states of job 'tiny'")) << diagnose.output;
  CommandOutcome unnamed = Softwire("diagnose " + server_->address());
  EXPECT_NE(unnamed.exit_code, 0) << unnamed.output;
  EXPECT_TRUE(Contains(unnamed.output, "--job")) << unnamed.output;
  CommandOutcome cancel = Softwire("cancel " + id + to_);
  EXPECT_EQ(cancel.exit_code, 0) << cancel.output;
  EXPECT_TRUE(Contains(cancel.output, id + ": CANCELLED")) << cancel.output;
}

}  // namespace
}  // namespace softwire
