// A server killed (SIGKILL) while one job runs and two wait, started again on its state
// directory: every record is there, the waiting jobs run, the running one failed saying why.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

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

}  // namespace
}  // namespace softwire
