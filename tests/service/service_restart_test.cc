// A server killed (SIGKILL) while one job runs and two wait, started again on its state
// directory: every record is there, the waiting jobs run, the running one failed saying why; a
// `softwire submit` that followed a job through it picks its feed up again where it broke.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "base/file.h"
#include "cli/testing/softwire_process.h"
#include "service/rpc/job_client.h"
#include "tests/service/serve_process.h"

namespace softwire {
namespace {

using cli_testing::Contains;
using service_testing::ClientFor;
using service_testing::ServeProcess;
using service_testing::TestDirectory;
using service_testing::TinySubmission;
using service_testing::WaitForState;

TEST(RestartTest, AKilledServerRestartedLosesNoRecordAndRunsTheQueuedJobs) {
  const std::string state = TestDirectory("restart") + "/state";
  std::string running;
  std::vector<std::string> queued;
  {
    ServeProcess first(SOFTWIRE_BINARY, {"--cluster", "1cpu"}, state);
    ASSERT_TRUE(first.Start()) << first.Output();
    service::JobClient client(ClientFor(first.address()));
    StatusOr<proto::SubmitJobResponse> endless = client.Submit(TinySubmission(100000000));
    ASSERT_TRUE(endless.ok()) << endless.status();
    running = endless->job().job_id();
    ASSERT_EQ(WaitForState(&client, running, proto::JOB_STATE_RUNNING, 30).state(),
              proto::JOB_STATE_RUNNING);
    for (int i = 0; i < 2; ++i) {
      StatusOr<proto::SubmitJobResponse> waiting = client.Submit(TinySubmission(5));
      ASSERT_TRUE(waiting.ok()) << waiting.status();
      EXPECT_EQ(waiting->job().state(), proto::JOB_STATE_QUEUED);
      queued.push_back(waiting->job().job_id());
    }
    first.Stop(SIGKILL);
  }
  ServeProcess second(SOFTWIRE_BINARY, {"--cluster", "1cpu"}, state);
  ASSERT_TRUE(second.Start()) << second.Output();
  service::JobClient client(ClientFor(second.address()));
  std::vector<proto::JobInfo> jobs = service_testing::WaitUntilAllEnded(&client, 60);
  ASSERT_EQ(jobs.size(), 3u);
  for (const proto::JobInfo& job : jobs) {
    if (job.job_id() == running) {
      EXPECT_EQ(job.state(), proto::JOB_STATE_FAILED) << job.DebugString();
      EXPECT_TRUE(Contains(job.error(), "server stopped")) << job.error();
    } else {
      EXPECT_EQ(job.state(), proto::JOB_STATE_SUCCEEDED) << job.DebugString();
      EXPECT_EQ(job.completed_steps(), 5) << job.DebugString();
    }
  }
  std::vector<proto::JobEvent> events = service_testing::AllEvents(&client, running);
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.back().has_failed()) << events.back().DebugString();
  for (const std::string& id : queued) {
    std::vector<proto::JobEvent> feed = service_testing::AllEvents(&client, id);
    ASSERT_FALSE(feed.empty());
    EXPECT_TRUE(feed.back().has_finished()) << feed.back().DebugString();
  }
}

TEST(RestartTest, SubmitFollowsItsJobAcrossAServerRestartMissingNothing) {
  const std::string directory = TestDirectory("reconnect");
  const std::string state = directory + "/state";
  const std::string listen = "127.0.0.1:" + std::to_string(service_testing::FreeLoopbackPort());
  const std::vector<std::string> args = {"--cluster", "1cpu", "--listen", listen};
  const std::string job = directory + "/tiny.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(job, cli_testing::kTinyJob).ok());
  const std::string metrics = directory + "/metrics.jsonl";
  auto first = std::make_unique<ServeProcess>(SOFTWIRE_BINARY, args, state);
  ASSERT_TRUE(first->Start()) << first->Output();
  ASSERT_EQ(first->address(), listen);
  // The device is held by an endless job, so the followed one waits in the queue.
  service::JobClient client(ClientFor(listen));
  StatusOr<proto::SubmitJobResponse> endless = client.Submit(TinySubmission(100000000));
  ASSERT_TRUE(endless.ok()) << endless.status();
  service_testing::BackgroundSoftwire submit(
      SOFTWIRE_BINARY, "submit " + job + " --to " + listen + " --steps 6 --metrics-out " + metrics,
      directory + "/submit.out");
  ASSERT_TRUE(submit.WaitFor("job 'tiny'", 30)) << submit.Output();
  first->Stop(SIGKILL);
  first.reset();
  ServeProcess second(SOFTWIRE_BINARY, args, state);
  ASSERT_TRUE(second.Start()) << second.Output();
  EXPECT_EQ(submit.Finish(0, 60), 0) << submit.Output();
  EXPECT_TRUE(Contains(submit.Output(), "watching again from event")) << submit.Output();
  EXPECT_TRUE(Contains(submit.Output(), "done: 6 steps")) << submit.Output();
  StatusOr<std::string> lines = ReadFile(metrics);
  ASSERT_TRUE(lines.ok());
  EXPECT_EQ(std::count(lines->begin(), lines->end(), '\n'), 6) << *lines;
}

}  // namespace
}  // namespace softwire
