// Cancelling served jobs: a running job stops within 2 s and its device's memory is free again;
// Ctrl-C in `softwire submit` leaves the job running, or with --cancel-on-interrupt cancels it.
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
#include "service/rpc/job_client.h"
#include "tests/service/serve_process.h"

namespace softwire {
namespace {

using cli_testing::Contains;
using service_testing::BackgroundSoftwire;
using service_testing::ClientFor;
using service_testing::ServeProcess;
using service_testing::TestDirectory;
using service_testing::TinySubmission;
using service_testing::WaitForState;
using Clock = std::chrono::steady_clock;

constexpr int64_t kEndlessSteps = 100000000;

// The device that `job_id` holds, or nullptr.
const proto::DeviceInfo* DeviceHeldBy(const proto::ListDevicesResponse& devices,
                                      const std::string& job_id) {
  for (const proto::DeviceInfo& device : devices.device()) {
    if (device.job_id() == job_id) return &device;
  }
  return nullptr;
}

TEST(CancelTest, CancelStopsARunningJobWithinTwoSecondsAndFreesItsMemory) {
  ServeProcess server(SOFTWIRE_BINARY, {"--cluster", "1cpu"}, TestDirectory("cancel") + "/state");
  ASSERT_TRUE(server.Start()) << server.Output();
  service::JobClient client(ClientFor(server.address()));
  StatusOr<proto::SubmitJobResponse> submitted = client.Submit(TinySubmission(kEndlessSteps));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const std::string id = submitted->job().job_id();
  ASSERT_EQ(WaitForState(&client, id, proto::JOB_STATE_RUNNING, 30).state(),
            proto::JOB_STATE_RUNNING);
  // Its memory is allocated once its actors run: wait for a step.
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < give_up && client.GetJob(id).ok() &&
         client.GetJob(id)->completed_steps() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  StatusOr<proto::ListDevicesResponse> busy = client.ListDevices();
  ASSERT_TRUE(busy.ok()) << busy.status();
  const proto::DeviceInfo* held = DeviceHeldBy(*busy, id);
  ASSERT_NE(held, nullptr) << busy->DebugString();
  EXPECT_GT(held->allocated_bytes(), 0) << held->DebugString();

  const Clock::time_point asked = Clock::now();
  StatusOr<proto::JobInfo> cancelled = client.Cancel(id, "the test is over");
  const double seconds = std::chrono::duration<double>(Clock::now() - asked).count();
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->state(), proto::JOB_STATE_CANCELLED);
  EXPECT_LT(seconds, 2.0 * cli_testing::TestTimeScale());
  StatusOr<proto::ListDevicesResponse> free = client.ListDevices();
  ASSERT_TRUE(free.ok()) << free.status();
  for (const proto::DeviceInfo& device : free->device()) {
    EXPECT_TRUE(device.job_id().empty()) << device.DebugString();
    EXPECT_EQ(device.allocated_bytes(), 0) << device.DebugString();
  }
  std::vector<proto::JobEvent> events = service_testing::AllEvents(&client, id);
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.back().has_cancelled()) << events.back().DebugString();
  EXPECT_EQ(events.back().cancelled().reason(), "the test is over");
  // Cancelling again changes nothing; an unknown job is NOT_FOUND.
  StatusOr<proto::JobInfo> again = client.Cancel(id);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->state(), proto::JOB_STATE_CANCELLED);
  EXPECT_EQ(client.Cancel("job-424242").status().code(), StatusCode::kNotFound);
}

TEST(CancelTest, CtrlCInSubmitLeavesTheJobRunningUnlessToldToCancelIt) {
  const std::string directory = TestDirectory("interrupt");
  ServeProcess server(SOFTWIRE_BINARY, {"--cluster", "2cpu"}, directory + "/state");
  ASSERT_TRUE(server.Start()) << server.Output();
  const std::string job = directory + "/tiny.pbtxt";
  ASSERT_TRUE(WriteFileAtomically(job, cli_testing::kTinyJob).ok());
  service::JobClient client(ClientFor(server.address()));
  const std::string args = "submit " + job + " --to " + server.address() + " --log-every 1000 " +
                           "--steps " + std::to_string(kEndlessSteps);

  BackgroundSoftwire left(SOFTWIRE_BINARY, args, directory + "/left.out");
  ASSERT_TRUE(left.WaitFor("/100000000  loss", 30)) << left.Output();
  EXPECT_EQ(left.Finish(SIGINT, 10), 1) << left.Output();
  EXPECT_TRUE(Contains(left.Output(), "keeps running")) << left.Output();
  EXPECT_TRUE(Contains(left.Output(), "softwire cancel job-")) << left.Output();

  BackgroundSoftwire cancelling(SOFTWIRE_BINARY, args + " --cancel-on-interrupt",
                                directory + "/cancel.out");
  ASSERT_TRUE(cancelling.WaitFor("/100000000  loss", 30)) << cancelling.Output();
  EXPECT_EQ(cancelling.Finish(SIGINT, 10), 1) << cancelling.Output();
  EXPECT_TRUE(Contains(cancelling.Output(), "cancelled")) << cancelling.Output();

  StatusOr<std::vector<proto::JobInfo>> jobs = client.ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  // Newest first: the cancelled one, then the one left running.
  EXPECT_EQ(jobs->at(0).state(), proto::JOB_STATE_CANCELLED) << jobs->at(0).DebugString();
  EXPECT_EQ(jobs->at(1).state(), proto::JOB_STATE_RUNNING) << jobs->at(1).DebugString();
}

}  // namespace
}  // namespace softwire
