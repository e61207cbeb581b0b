// JobServer and JobClient in one process over a real JobManager (cpu devices, a temporary state
// directory): results larger than one chunk come back whole, a watch resumes from any event, a
// server that stops ends its watch streams at once, Diagnostics asks about one job by id.
#include "service/rpc/job_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "base/npy.h"
#include "proto/testing/classifier_job_text.h"
#include "service/rpc/job_client.h"
#include "service/rpc/job_service.h"

namespace softwire {
namespace service {
namespace {

using Clock = std::chrono::steady_clock;

// A classifier whose weights (256 x 1536 floats, 1.5 MiB) take two result chunks.
std::string WideJob() {
  proto_testing::ClassifierJob job;
  job.name = "wide";
  job.features = 256;
  job.classes = 1536;
  job.data_seed = 3;
  job.weight_seed = 2;
  job.weight_stddev = 0.01;
  job.steps = 3;
  job.micro_batch_size = 4;
  job.micro_batches_per_step = 1;
  return proto_testing::ClassifierJobText(job);
}

class JobServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = ::testing::TempDir() + "/job_server_test_" + std::to_string(getpid());
    std::filesystem::remove_all(state_);
    JobManagerOptions options;
    options.state_directory = state_;
    StatusOr<std::unique_ptr<JobManager>> jobs = JobManager::Start(std::move(options));
    ASSERT_TRUE(jobs.ok()) << jobs.status();
    jobs_ = std::move(*jobs);
    JobServerOptions server_options;
    server_options.address = "127.0.0.1:0";
    StatusOr<std::unique_ptr<JobServer>> server = JobServer::Start(jobs_.get(), server_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    JobClientOptions client_options;
    client_options.address = server_->address();
    client_ = std::make_unique<JobClient>(client_options);
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    jobs_.reset();
    std::filesystem::remove_all(state_);
  }

  // Submits `text` and follows it to its end; its events.
  std::vector<proto::JobEvent> RunToTheEnd(const std::string& text, int64_t steps) {
    proto::JobSubmission submission;
    submission.set_job_text(text);
    submission.set_file_name("job.pbtxt");
    submission.mutable_settings()->set_steps(steps);
    StatusOr<proto::SubmitJobResponse> submitted = client_->Submit(submission);
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    if (!submitted.ok()) return {};
    job_id_ = submitted->job().job_id();
    std::vector<proto::JobEvent> events;
    Status watched = client_->Watch(job_id_, 1, [&](const proto::JobEvent& event) {
      events.push_back(event);
      return true;
    });
    EXPECT_TRUE(watched.ok()) << watched;
    return events;
  }

  std::string state_;
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<JobServer> server_;
  std::unique_ptr<JobClient> client_;
  std::string job_id_;
};

TEST_F(JobServerTest, AVariableLargerThanAChunkComesBackWholeAndInOrder) {
  std::vector<proto::JobEvent> events = RunToTheEnd(WideJob(), 3);
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.back().has_finished()) << events.back().DebugString();
  proto::FetchResultsRequest request;
  request.set_job_id(job_id_);
  request.set_variables(true);
  std::map<std::string, std::string> bytes;
  std::map<std::string, int> chunks;
  proto::ResultsHeader header;
  Status fetched = client_->Fetch(request, [&](const proto::FetchResultsResponse& part) {
    if (part.has_header()) header = part.header();
    if (part.has_variable()) {
      EXPECT_EQ(part.variable().offset(),
                static_cast<int64_t>(bytes[part.variable().name()].size()));
      EXPECT_LE(static_cast<int64_t>(part.variable().data().size()), kResultChunkBytes);
      bytes[part.variable().name()] += part.variable().data();
      ++chunks[part.variable().name()];
    }
    EXPECT_FALSE(part.has_step()) << "only the variables were asked for";
    return Status::Ok();
  });
  ASSERT_TRUE(fetched.ok()) << fetched;
  ASSERT_EQ(header.variable_size(), 1);
  EXPECT_EQ(header.variable(0).bytes(), 256 * 1536 * 4);
  EXPECT_EQ(chunks["w"], 2);
  StatusOr<StoredResults> stored = jobs_->GetResults(job_id_);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->variables.size(), 1u);
  StatusOr<NpyArray> saved = ReadNpy(stored->variables[0].npy_path);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(bytes["w"], std::string(saved->data.begin(), saved->data.end()));
  // A trace the job does not have is refused by name.
  request.set_variables(false);
  request.set_trace(true);
  Status untraced =
      client_->Fetch(request, [](const proto::FetchResultsResponse&) { return Status::Ok(); });
  EXPECT_EQ(untraced.code(), StatusCode::kFailedPrecondition) << untraced;
}

TEST_F(JobServerTest, AWatchResumesFromAnyEventAndUnknownJobsAreNotFound) {
  std::vector<proto::JobEvent> all = RunToTheEnd(WideJob(), 3);
  ASSERT_GE(all.size(), 4u);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].sequence(), static_cast<int64_t>(i + 1));
  const int64_t from = all[all.size() - 2].sequence();
  std::vector<int64_t> resumed;
  ASSERT_TRUE(client_
                  ->Watch(job_id_, from,
                          [&](const proto::JobEvent& event) {
                            resumed.push_back(event.sequence());
                            return true;
                          })
                  .ok());
  EXPECT_EQ(resumed, (std::vector<int64_t>{from, from + 1}));
  Status unknown = client_->Watch("job-999", 1, [](const proto::JobEvent&) { return true; });
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound) << unknown;
  EXPECT_EQ(client_->GetJob("job-999").status().code(), StatusCode::kNotFound);
  StatusOr<proto::GetWaitStatesResponse> unnamed =
      client_->GetWaitStates("", std::chrono::seconds(5));
  EXPECT_EQ(unnamed.status().code(), StatusCode::kInvalidArgument) << unnamed.status();
  StatusOr<proto::GetWaitStatesResponse> ended =
      client_->GetWaitStates(job_id_, std::chrono::seconds(5));
  EXPECT_EQ(ended.status().code(), StatusCode::kFailedPrecondition) << ended.status();
}

TEST_F(JobServerTest, AStoppingServerEndsItsWatchStreamsAtOnce) {
  proto::JobSubmission submission;
  submission.set_job_text(WideJob());
  submission.mutable_settings()->set_steps(100000000);
  StatusOr<proto::SubmitJobResponse> submitted = client_->Submit(submission);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  Status watched;
  std::thread watcher([&] {
    watched =
        client_->Watch(submitted->job().job_id(), 1, [](const proto::JobEvent&) { return true; });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const Clock::time_point stopping = Clock::now();
  server_.reset();
  const double seconds = std::chrono::duration<double>(Clock::now() - stopping).count();
  watcher.join();
  EXPECT_LT(seconds, 1.5);
  EXPECT_EQ(watched.code(), StatusCode::kUnavailable) << watched;
}

}  // namespace
}  // namespace service
}  // namespace softwire
