// 50 submissions at once, from client threads and `softwire submit` processes: every one is
// queued and completes, none is lost and none runs twice; a retried submission (same key) is
// the same job.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/file.h"
#include "cli/testing/softwire_process.h"
#include "service/rpc/job_client.h"
#include "tests/service/serve_process.h"

namespace softwire {
namespace {

using service_testing::ClientFor;
using service_testing::ServeProcess;
using service_testing::TestDirectory;
using service_testing::TinySubmission;

constexpr int kThreads = 5;
constexpr int kSubmissionsPerThread = 8;
constexpr int kProcesses = 10;
constexpr int64_t kSteps = 3;

TEST(ConcurrencyTest, FiftyConcurrentSubmissionsAllCompleteExactlyOnce) {
  const std::string directory = TestDirectory("concurrency");
  ServeProcess server(SOFTWIRE_BINARY, {"--cluster", "2cpu"}, directory + "/state");
  ASSERT_TRUE(server.Start()) << server.Output();
  const std::string job = directory + "/tiny.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(job, cli_testing::kTinyJob).ok());

  std::mutex mutex;
  std::set<std::string> ids;
  std::map<std::string, std::string> key_of;  // Job id -> idempotency key (thread clients).
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&, t] {
      service::JobClient client(ClientFor(server.address()));
      for (int i = 0; i < kSubmissionsPerThread; ++i) {
        const std::string key = "thread-" + std::to_string(t) + "-" + std::to_string(i);
        StatusOr<proto::SubmitJobResponse> submitted = client.Submit(TinySubmission(kSteps, key));
        std::lock_guard<std::mutex> lock(mutex);
        if (!submitted.ok()) {
          failures.push_back(submitted.status().ToString());
          continue;
        }
        if (submitted->existing()) failures.push_back(key + " was taken for an existing job");
        ids.insert(submitted->job().job_id());
        key_of[submitted->job().job_id()] = key;
      }
    });
  }
  for (int p = 0; p < kProcesses; ++p) {
    clients.emplace_back([&] {
      service_testing::CommandOutcome outcome = service_testing::RunSoftwire(
          SOFTWIRE_BINARY, "submit " + job + " --to " + server.address() + " --detach --steps " +
                               std::to_string(kSteps));
      std::lock_guard<std::mutex> lock(mutex);
      if (outcome.exit_code != 0 || outcome.output.rfind("job-", 0) != 0) {
        failures.push_back(outcome.output);
        return;
      }
      ids.insert(outcome.output.substr(0, outcome.output.find('\n')));
    });
  }
  for (std::thread& client : clients) client.join();
  for (const std::string& failure : failures) ADD_FAILURE() << failure;
  ASSERT_EQ(ids.size(), static_cast<size_t>(kThreads * kSubmissionsPerThread + kProcesses));

  service::JobClient client(ClientFor(server.address()));
  std::vector<proto::JobInfo> jobs = service_testing::WaitUntilAllEnded(&client, 240);
  ASSERT_EQ(jobs.size(), ids.size());
  for (const proto::JobInfo& info : jobs) {
    EXPECT_TRUE(ids.count(info.job_id())) << info.job_id();
    EXPECT_EQ(info.state(), proto::JOB_STATE_SUCCEEDED) << info.DebugString();
    EXPECT_EQ(info.completed_steps(), kSteps) << info.DebugString();
    // Ran once: one start, kSteps steps, one end.
    int started = 0;
    int steps = 0;
    int ended = 0;
    for (const proto::JobEvent& event : service_testing::AllEvents(&client, info.job_id())) {
      started += event.has_started();
      steps += event.has_step();
      ended += event.has_finished() + event.has_failed() + event.has_cancelled();
    }
    EXPECT_EQ(started, 1) << info.job_id();
    EXPECT_EQ(steps, kSteps) << info.job_id();
    EXPECT_EQ(ended, 1) << info.job_id();
  }

  // A client that retries a submission it never heard back about gets the same job.
  const auto [id, key] = *key_of.begin();
  StatusOr<proto::SubmitJobResponse> retried = client.Submit(TinySubmission(kSteps, key));
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_TRUE(retried->existing());
  EXPECT_EQ(retried->job().job_id(), id);
  StatusOr<std::vector<proto::JobInfo>> after = client.ListJobs();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size(), ids.size());
}

}  // namespace
}  // namespace softwire
