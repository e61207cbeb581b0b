// JobManager end to end, on real cpu devices: a submitted job trains to RunPlan's losses and
// leaves its results; bad jobs and data outside the data root are refused as `softwire run`
// words them; idempotency keys, two jobs at once on disjoint devices, cancellation that frees
// the devices quickly, restarts after a graceful stop and after a killed server, and fifty
// submissions from many threads.
#include "service/job_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "base/file.h"
#include "base/npy.h"
#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "runtime/host/job_runner.h"
#include "service/event_log.h"
#include "service/job_compilation.h"

namespace softwire {
namespace service {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr char kMlpPath[] = "tests/compiler/jobs/mlp.pbtxt";
// The MLP bench job (784-1024-1024-10, 256 samples a micro-batch): steps of a tenth of a second.
constexpr char kBenchMlpPath[] = "bench/training/mlp.pbtxt";
constexpr int64_t kLongSteps = 1000000;  // Runs until cancelled.

proto::JobSubmission MlpSubmission(int64_t steps, const std::string& path = kMlpPath) {
  proto::JobSubmission submission;
  submission.set_job_text(*ReadFile(path));
  submission.set_file_name("mlp.pbtxt");
  submission.mutable_settings()->set_steps(steps);
  return submission;
}

// A tiny classifier reading its samples from X and Y and its weights from W.
std::string NpyJobText(const std::string& x, const std::string& y, const std::string& w) {
  return "name: \"tiny\"\n"
         "source { name: \"train\"\n"
         "  output { name: \"x\" dtype: DATA_TYPE_FLOAT32 sample_dims: 4 }\n"
         "  output { name: \"labels\" dtype: DATA_TYPE_INT32 }\n"
         "  npy { path: \"" +
         x + "\" path: \"" + y +
         "\" } }\n"
         "variable { name: \"w\" dtype: DATA_TYPE_FLOAT32 dims: [4, 3] initializer { npy_path: "
         "\"" +
         w +
         "\" } }\n"
         "op { name: \"fc\" type: \"matmul\" input: [\"x\", \"w\"] output: \"logits\" }\n"
         "op { name: \"xent\" type: \"softmax_cross_entropy\" input: [\"logits\", \"labels\"] "
         "output: \"losses\" }\n"
         "op { name: \"mean\" type: \"reduce_mean\" input: \"losses\" output: \"loss\" }\n"
         "train { loss: \"loss\" optimizer { sgd { learning_rate: 0.1 } } steps: 3 "
         "micro_batch_size: 8 }\n";
}

bool Terminal(proto::JobState state) {
  return state == proto::JOB_STATE_SUCCEEDED || state == proto::JOB_STATE_FAILED ||
         state == proto::JOB_STATE_CANCELLED;
}

class JobManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = ::testing::TempDir() + "/job_manager_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(base_);
    state_ = base_ + "/state";
  }
  void TearDown() override { std::filesystem::remove_all(base_); }

  JobManagerOptions Options(const std::string& cluster) const {
    JobManagerOptions options;
    options.state_directory = state_;
    StatusOr<proto::Cluster> parsed = placement::ParseClusterShorthand(cluster, 2);
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    options.cluster = *parsed;
    options.data_root = data_root_;
    return options;
  }

  std::unique_ptr<JobManager> StartManager(const std::string& cluster,
                                           const JobLimits& limits = JobLimits()) const {
    JobManagerOptions options = Options(cluster);
    options.limits = limits;
    StatusOr<std::unique_ptr<JobManager>> manager = JobManager::Start(std::move(options));
    EXPECT_TRUE(manager.ok()) << manager.status();
    return manager.ok() ? std::move(*manager) : nullptr;
  }

  static std::string Submit(JobManager* manager, const proto::JobSubmission& submission) {
    StatusOr<SubmittedJob> submitted = manager->Submit(submission);
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    return submitted.ok() ? submitted->job.job_id() : "";
  }

  // Every event of the job up to its terminal one.
  static std::vector<proto::JobEvent> FollowToEnd(
      JobManager* manager, const std::string& id,
      std::chrono::seconds limit = std::chrono::seconds(120)) {
    std::vector<proto::JobEvent> events;
    const auto deadline = Clock::now() + limit;
    while (Clock::now() < deadline) {
      StatusOr<std::vector<proto::JobEvent>> next = manager->WaitForEvents(
          id, static_cast<int64_t>(events.size()) + 1, std::chrono::milliseconds(500));
      EXPECT_TRUE(next.ok()) << next.status();
      if (!next.ok()) break;
      for (proto::JobEvent& event : *next) events.push_back(std::move(event));
      if (!events.empty() && IsTerminalEvent(events.back())) return events;
    }
    ADD_FAILURE() << "job " << id << " did not end";
    return events;
  }

  // Waits until the job reported a step.
  static void AwaitFirstStep(JobManager* manager, const std::string& id) {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline) {
      StatusOr<proto::JobInfo> info = manager->GetJob(id);
      ASSERT_TRUE(info.ok()) << info.status();
      ASSERT_FALSE(Terminal(info->state())) << info->error();
      if (info->completed_steps() > 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "job " << id << " made no step";
  }

  std::string base_;
  std::string state_;
  std::string data_root_;
};

TEST_F(JobManagerTest, ASubmittedJobTrainsToTheLossesOfRunPlanAndKeepsItsResults) {
  std::unique_ptr<JobManager> manager = StartManager("2cpu");
  ASSERT_NE(manager, nullptr);
  StatusOr<SubmittedJob> submitted = manager->Submit(MlpSubmission(4));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  EXPECT_EQ(submitted->job.job_id(), "job-1");
  EXPECT_EQ(submitted->job.name(), "mlp");
  EXPECT_FALSE(submitted->existing);
  EXPECT_EQ(submitted->job.plan().device_size(), 1);
  const std::vector<proto::JobEvent> events = FollowToEnd(manager.get(), "job-1");
  ASSERT_GE(events.size(), 7u);
  EXPECT_TRUE(events[0].has_compiled());
  // The compiled event says what each device's planned bytes hold (plan/memory_breakdown.h).
  for (const proto::PlannedDevice& device : events[0].compiled().device()) {
    const proto::MemorySplit& m = device.memory();
    EXPECT_EQ(m.weights() + m.gradients() + m.optimizer_state() + m.kept_activations() +
                  m.transient() + m.transfer() + m.workspaces() + m.other_state() + m.padding(),
              device.planned_bytes());
    EXPECT_GT(m.weights(), 0);
    EXPECT_GT(m.gradients(), 0);
  }
  EXPECT_TRUE(events[1].has_queued());
  EXPECT_TRUE(events[2].has_started());
  ASSERT_TRUE(events.back().has_finished()) << events.back().DebugString();
  EXPECT_EQ(events.back().finished().steps(), 4);
  std::vector<double> losses;
  for (const proto::JobEvent& event : events) {
    if (event.has_step()) losses.push_back(event.step().loss());
  }

  // The same plan run by RunPlan, as `softwire run --steps 4` runs it.
  StatusOr<compiler::JobFile> file = compiler::ParseJobFile(kMlpPath);
  ASSERT_TRUE(file.ok()) << file.status();
  compiler::CompileOptions compile_options;
  compile_options.steps = 4;
  compile_options.cluster = FirstDevices(manager->options().cluster, 1);
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, compile_options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  StatusOr<runtime::RunResult> expected = runtime::RunPlan(*plan, runtime::RunOptions());
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_EQ(losses.size(), expected->steps.size());
  for (size_t step = 0; step < losses.size(); ++step) {
    EXPECT_DOUBLE_EQ(losses[step], expected->steps[step].loss) << "step " << step;
  }

  StatusOr<proto::JobInfo> info = manager->GetJob("job-1");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->state(), proto::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(info->completed_steps(), 4);
  EXPECT_DOUBLE_EQ(info->last_loss(), losses.back());
  EXPECT_EQ(info->last_event(), static_cast<int64_t>(events.size()));
  StatusOr<StoredResults> results = manager->GetResults("job-1");
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(results->steps.size(), 4u);
  ASSERT_EQ(results->variables.size(), expected->variables.size());
  for (const StoredVariable& variable : results->variables) {
    StatusOr<NpyArray> stored = ReadNpy(variable.npy_path);
    ASSERT_TRUE(stored.ok()) << stored.status();
    EXPECT_EQ(static_cast<int64_t>(stored->data.size()), variable.bytes);
    EXPECT_EQ(stored->data, expected->variables.at(variable.name).data) << variable.name;
  }
  StatusOr<std::string> metrics = ReadFile(state_ + "/jobs/job-1/results/metrics.jsonl");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_EQ(std::count(metrics->begin(), metrics->end(), '\n'), 4);
  EXPECT_TRUE(results->trace_path.empty());
  EXPECT_EQ(manager->DescribeWaits("job-1", std::chrono::seconds(1)).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(manager->GetJob("job-9").status().code(), StatusCode::kNotFound);
}

TEST_F(JobManagerTest, ATracedJobLeavesItsTraceAndSummary) {
  std::unique_ptr<JobManager> manager = StartManager("1cpu");
  ASSERT_NE(manager, nullptr);
  proto::JobSubmission submission = MlpSubmission(2);
  submission.mutable_settings()->set_trace(true);
  const std::string id = Submit(manager.get(), submission);
  ASSERT_TRUE(FollowToEnd(manager.get(), id).back().has_finished());
  StatusOr<StoredResults> results = manager->GetResults(id);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_TRUE(std::filesystem::is_regular_file(results->trace_path));
  EXPECT_FALSE(results->trace_summary.empty());
}

TEST_F(JobManagerTest, ABadJobIsRefusedWithTheTextSoftwireRunPrintsAndTheServerGoesOn) {
  std::unique_ptr<JobManager> manager = StartManager("2cpu");
  ASSERT_NE(manager, nullptr);
  for (const std::string name :
       {"dangling_input", "syntax_error", "unknown_field", "shape_mismatch", "duplicate_op_name"}) {
    const std::string path = "tests/compiler/bad_input/" + name + ".pbtxt";
    // What `softwire run PATH` prints after "softwire run: ".
    StatusOr<compiler::JobFile> file = compiler::ParseJobFile(path);
    Status expected = file.status();
    if (file.ok()) {
      compiler::CompileOptions options;
      options.cluster = FirstDevices(manager->options().cluster, 1);
      expected = compiler::CompileJob(*file, options).status();
    }
    ASSERT_FALSE(expected.ok()) << path;
    proto::JobSubmission submission;
    submission.set_job_text(*ReadFile(path));
    submission.set_file_name(path);
    StatusOr<SubmittedJob> submitted = manager->Submit(submission);
    EXPECT_EQ(submitted.status().code(), StatusCode::kInvalidArgument) << path;
    EXPECT_EQ(submitted.status().message(), expected.message());
  }
  proto::JobSubmission too_wide = MlpSubmission(2);
  too_wide.mutable_settings()->mutable_parallel()->set_data_parallel(4);
  StatusOr<SubmittedJob> refused = manager->Submit(too_wide);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("needs 4 devices but the cluster has 2"));
  proto::JobSubmission too_many = MlpSubmission(2);
  too_many.mutable_settings()->set_devices(3);
  EXPECT_EQ(manager->Submit(too_many).status().code(), StatusCode::kFailedPrecondition);
  proto::JobSubmission empty;
  EXPECT_EQ(manager->Submit(empty).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(manager->ListJobs({}, 0).empty());

  const std::string id = Submit(manager.get(), MlpSubmission(2));
  EXPECT_TRUE(FollowToEnd(manager.get(), id).back().has_finished());
}

TEST_F(JobManagerTest, DataOutsideTheDataRootIsRefusedAndDataInsideItOrSentRuns) {
  data_root_ = base_ + "/root";
  ASSERT_TRUE(MakeDirectories(data_root_ + "/sets").ok());
  std::vector<float> x(64 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) / 7.0f;
  std::vector<int32_t> y(64);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<int32_t>(i % 3);
  ASSERT_TRUE(WriteNpy(data_root_ + "/sets/x.npy", DType::kFloat32, Shape({64, 4}), x.data()).ok());
  ASSERT_TRUE(WriteNpy(data_root_ + "/sets/y.npy", DType::kInt32, Shape({64}), y.data()).ok());
  ASSERT_TRUE(WriteNpy(base_ + "/outside.npy", DType::kInt32, Shape({64}), y.data()).ok());
  std::filesystem::create_symlink(base_ + "/outside.npy", data_root_ + "/sets/escape.npy");
  std::vector<float> w(12, 0.1f);
  const std::string w_path = base_ + "/w.npy";
  ASSERT_TRUE(WriteNpy(w_path, DType::kFloat32, Shape({4, 3}), w.data()).ok());
  std::unique_ptr<JobManager> manager = StartManager("1cpu");
  ASSERT_NE(manager, nullptr);

  proto::JobSubmission good;
  good.set_job_text(NpyJobText("sets/x.npy", "sets/y.npy", "init/w.npy"));
  proto::DataFile* sent = good.add_data_file();
  sent->set_path("init/w.npy");
  sent->set_content(*ReadFile(w_path));
  const std::string id = Submit(manager.get(), good);
  const std::vector<proto::JobEvent> events = FollowToEnd(manager.get(), id);
  ASSERT_TRUE(events.back().has_finished()) << events.back().DebugString();
  StatusOr<StoredResults> results = manager->GetResults(id);
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->variables.size(), 1u);
  EXPECT_EQ(results->variables[0].name, "w");

  const struct {
    std::string y;
    std::string expected;
  } refused[] = {
      {base_ + "/outside.npy", "source 'train': data path '" + base_ + "/outside.npy' is absolute"},
      {"../outside.npy", "source 'train': data path '../outside.npy' climbs out"},
      {"sets/escape.npy", "source 'train': data path 'sets/escape.npy' leads out"},
  };
  for (const auto& test : refused) {
    proto::JobSubmission bad = good;
    bad.set_job_text(NpyJobText("sets/x.npy", test.y, "init/w.npy"));
    StatusOr<SubmittedJob> submitted = manager->Submit(bad);
    EXPECT_EQ(submitted.status().code(), StatusCode::kInvalidArgument) << test.y;
    EXPECT_THAT(submitted.status().message(), HasSubstr(test.expected));
  }
  EXPECT_EQ(manager->ListJobs({}, 0).size(), 1u);
}

TEST_F(JobManagerTest, SubmissionsWithOneIdempotencyKeyMakeOneJob) {
  std::unique_ptr<JobManager> manager = StartManager("2cpu");
  ASSERT_NE(manager, nullptr);
  proto::JobSubmission submission = MlpSubmission(2);
  submission.set_idempotency_key("key-1");
  std::vector<StatusOr<SubmittedJob>> answers(8, UnavailableError("not yet"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < answers.size(); ++i) {
    threads.emplace_back([&, i] { answers[i] = manager->Submit(submission); });
  }
  for (std::thread& thread : threads) thread.join();
  int fresh = 0;
  for (const StatusOr<SubmittedJob>& answer : answers) {
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(answer->job.job_id(), "job-1");
    fresh += answer->existing ? 0 : 1;
  }
  EXPECT_EQ(fresh, 1);
  FollowToEnd(manager.get(), "job-1");
  StatusOr<SubmittedJob> again = manager->Submit(submission);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->existing);
  EXPECT_EQ(again->job.state(), proto::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(manager->ListJobs({}, 0).size(), 1u);
}

TEST_F(JobManagerTest, TwoJobsRunAtOnceOnDisjointDevices) {
  std::unique_ptr<JobManager> manager = StartManager("2cpu");
  ASSERT_NE(manager, nullptr);
  const std::string first = Submit(manager.get(), MlpSubmission(kLongSteps));
  const std::string second = Submit(manager.get(), MlpSubmission(kLongSteps));
  AwaitFirstStep(manager.get(), first);
  AwaitFirstStep(manager.get(), second);
  std::vector<proto::DeviceInfo> devices = manager->ListDevices();
  ASSERT_EQ(devices.size(), 2u);
  std::set<std::string> holders = {devices[0].job_id(), devices[1].job_id()};
  EXPECT_EQ(holders, std::set<std::string>({first, second}));
  EXPECT_GT(devices[0].allocated_bytes(), 0);
  EXPECT_EQ(devices[0].kind(), "cpu");
  EXPECT_NE(manager->GetJob(first)->device(0), manager->GetJob(second)->device(0));
  StatusOr<runtime::JobWaitStates> waits = manager->DescribeWaits(first, std::chrono::seconds(5));
  EXPECT_TRUE(waits.ok()) << waits.status();
  EXPECT_EQ(manager->ListJobs({proto::JOB_STATE_RUNNING}, 0).size(), 2u);
  EXPECT_EQ(manager->ListJobs({}, 1).at(0).job_id(), second);  // Newest first.
  ASSERT_TRUE(manager->Cancel(first, "").ok());
  ASSERT_TRUE(manager->Cancel(second, "").ok());
}

TEST_F(JobManagerTest, CancellingARunningJobStopsItWithinTwoSecondsAndFreesItsDevices) {
  std::unique_ptr<JobManager> manager = StartManager("2cpu");
  ASSERT_NE(manager, nullptr);
  proto::JobSubmission wide = MlpSubmission(kLongSteps, kBenchMlpPath);
  wide.mutable_settings()->mutable_parallel()->set_data_parallel(2);
  const std::string running = Submit(manager.get(), wide);
  const std::string queued = Submit(manager.get(), MlpSubmission(2));
  AwaitFirstStep(manager.get(), running);
  EXPECT_EQ(manager->QueuedJobs(), 1);

  StatusOr<proto::JobInfo> cancelled_queued = manager->Cancel(queued, "not needed");
  ASSERT_TRUE(cancelled_queued.ok()) << cancelled_queued.status();
  EXPECT_EQ(cancelled_queued->state(), proto::JOB_STATE_CANCELLED);
  EXPECT_EQ(manager->QueuedJobs(), 0);

  const auto start = Clock::now();
  StatusOr<proto::JobInfo> cancelled = manager->Cancel(running, "");
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_LT(seconds, 2.0);
  EXPECT_EQ(cancelled->state(), proto::JOB_STATE_CANCELLED);
  for (const proto::DeviceInfo& device : manager->ListDevices()) {
    EXPECT_EQ(device.job_id(), "") << device.device();
    EXPECT_EQ(device.allocated_bytes(), 0) << device.device();
  }
  const std::vector<proto::JobEvent> events = FollowToEnd(manager.get(), running);
  ASSERT_TRUE(events.back().has_cancelled());
  EXPECT_EQ(events.back().cancelled().reason(), "cancelled by a client");
  EXPECT_EQ(FollowToEnd(manager.get(), queued).back().cancelled().reason(), "not needed");
  // An ended job is returned as it is.
  EXPECT_EQ(manager->Cancel(running, "again")->state(), proto::JOB_STATE_CANCELLED);
  // The freed devices run the next job.
  const std::string next = Submit(manager.get(), MlpSubmission(2));
  EXPECT_TRUE(FollowToEnd(manager.get(), next).back().has_finished());
}

TEST_F(JobManagerTest, AGracefulStopCancelsTheRunningJobAndTheNextStartRunsTheQueuedOne) {
  std::string running;
  std::string queued;
  {
    std::unique_ptr<JobManager> manager = StartManager("1cpu");
    ASSERT_NE(manager, nullptr);
    running = Submit(manager.get(), MlpSubmission(kLongSteps));
    proto::JobSubmission keyed = MlpSubmission(3);
    keyed.set_idempotency_key("queued-key");
    queued = Submit(manager.get(), keyed);
    AwaitFirstStep(manager.get(), running);
  }
  std::unique_ptr<JobManager> manager = StartManager("1cpu");
  ASSERT_NE(manager, nullptr);
  StatusOr<proto::JobInfo> stopped = manager->GetJob(running);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_EQ(stopped->state(), proto::JOB_STATE_CANCELLED);
  EXPECT_EQ(stopped->error(), "the server stopped");
  EXPECT_TRUE(FollowToEnd(manager.get(), queued).back().has_finished());
  // The key is remembered across the restart.
  proto::JobSubmission keyed = MlpSubmission(3);
  keyed.set_idempotency_key("queued-key");
  StatusOr<SubmittedJob> again = manager->Submit(keyed);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->existing);
  EXPECT_EQ(again->job.job_id(), queued);
  EXPECT_EQ(Submit(manager.get(), MlpSubmission(1)), "job-3");
}

// A server killed while one job runs and another waits: the child process is the server; it
// dies with _exit, as under SIGKILL (no destructor runs).
TEST_F(JobManagerTest, AKilledServerLosesNoRecordFailsTheRunningJobAndRunsTheQueuedOne) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StatusOr<std::unique_ptr<JobManager>> manager = JobManager::Start(Options("1cpu"));
    if (!manager.ok()) ::_exit(2);
    StatusOr<SubmittedJob> running = (*manager)->Submit(MlpSubmission(kLongSteps));
    if (!running.ok()) ::_exit(3);
    for (int i = 0; i < 6000 && (*manager)->GetJob("job-1")->completed_steps() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!(*manager)->Submit(MlpSubmission(3)).ok()) ::_exit(4);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  // A write the kill tore in half.
  {
    proto::JobEvent step;
    step.mutable_step()->set_step(99);
    step.set_sequence(1000);
    const std::string record = EventRecord(step);
    std::ofstream out(state_ + "/jobs/job-1/events.log", std::ios::app | std::ios::binary);
    out.write(record.data(), static_cast<std::streamsize>(record.size() / 2));
  }

  std::unique_ptr<JobManager> manager = StartManager("1cpu");
  ASSERT_NE(manager, nullptr);
  EXPECT_EQ(manager->ListJobs({}, 0).size(), 2u);
  StatusOr<proto::JobInfo> died = manager->GetJob("job-1");
  ASSERT_TRUE(died.ok()) << died.status();
  EXPECT_EQ(died->state(), proto::JOB_STATE_FAILED);
  EXPECT_EQ(died->error(), "the server stopped while the job was running");
  EXPECT_GT(died->completed_steps(), 0);
  const std::vector<proto::JobEvent> events = FollowToEnd(manager.get(), "job-1");
  ASSERT_TRUE(events.back().has_failed());
  EXPECT_EQ(events.back().sequence(), static_cast<int64_t>(events.size()));
  EXPECT_TRUE(FollowToEnd(manager.get(), "job-2").back().has_finished());
  EXPECT_EQ(Submit(manager.get(), MlpSubmission(1)), "job-3");
}

TEST_F(JobManagerTest, SubmissionsOverTheLimitsAreRefusedAndOldJobsAreDropped) {
  JobLimits limits;
  limits.max_queued_jobs = 1;
  limits.max_job_bytes = 1 << 16;
  limits.max_upload_bytes = 100;
  limits.max_kept_jobs = 2;
  std::unique_ptr<JobManager> manager = StartManager("1cpu", limits);
  ASSERT_NE(manager, nullptr);
  proto::JobSubmission big = MlpSubmission(1);
  big.set_job_text(big.job_text() + std::string(1 << 16, ' '));
  EXPECT_EQ(manager->Submit(big).status().code(), StatusCode::kResourceExhausted);
  proto::JobSubmission upload = MlpSubmission(1);
  proto::DataFile* file = upload.add_data_file();
  file->set_path("unused.bin");
  file->set_content(std::string(101, 'x'));
  EXPECT_EQ(manager->Submit(upload).status().code(), StatusCode::kResourceExhausted);

  const std::string running = Submit(manager.get(), MlpSubmission(kLongSteps));
  AwaitFirstStep(manager.get(), running);
  const std::string queued = Submit(manager.get(), MlpSubmission(1));
  StatusOr<SubmittedJob> full = manager->Submit(MlpSubmission(1));
  EXPECT_EQ(full.status().code(), StatusCode::kResourceExhausted);
  ASSERT_TRUE(manager->Cancel(running, "").ok());
  EXPECT_TRUE(FollowToEnd(manager.get(), queued).back().has_finished());
  const std::string third = Submit(manager.get(), MlpSubmission(1));
  EXPECT_TRUE(FollowToEnd(manager.get(), third).back().has_finished());
  // Two kept: the oldest ended job and its folder are gone.
  const std::string fourth = Submit(manager.get(), MlpSubmission(1));
  EXPECT_TRUE(FollowToEnd(manager.get(), fourth).back().has_finished());
  const std::vector<proto::JobInfo> kept = manager->ListJobs({}, 0);
  EXPECT_LE(kept.size(), 2u);
  EXPECT_EQ(kept.front().job_id(), fourth);
  EXPECT_EQ(manager->GetJob(running).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(state_ + "/jobs/" + running));
}

TEST_F(JobManagerTest, FiftyConcurrentSubmissionsAllCompleteAndNoneTwice) {
  std::unique_ptr<JobManager> manager = StartManager("2cpu");
  ASSERT_NE(manager, nullptr);
  constexpr int kThreads = 10;
  constexpr int kPerThread = 5;
  std::vector<std::vector<std::string>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        proto::JobSubmission submission = MlpSubmission(2);
        submission.set_idempotency_key("client-" + std::to_string(t) + "-" + std::to_string(i));
        StatusOr<SubmittedJob> submitted = manager->Submit(submission);
        // A client that retries a submit whose answer it lost.
        StatusOr<SubmittedJob> retried = manager->Submit(submission);
        if (submitted.ok() && retried.ok() && submitted->job.job_id() == retried->job.job_id()) {
          ids[static_cast<size_t>(t)].push_back(submitted->job.job_id());
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<std::string> unique;
  for (const std::vector<std::string>& some : ids) unique.insert(some.begin(), some.end());
  ASSERT_EQ(unique.size(), static_cast<size_t>(kThreads * kPerThread));
  for (const std::string& id : unique) {
    EXPECT_TRUE(FollowToEnd(manager.get(), id).back().has_finished()) << id;
  }
  EXPECT_EQ(manager->ListJobs({proto::JOB_STATE_SUCCEEDED}, 0).size(), unique.size());
  EXPECT_EQ(manager->ListJobs({}, 0).size(), unique.size());
}

}  // namespace
}  // namespace service
}  // namespace softwire
