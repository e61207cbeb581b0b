#include "service/job_manager.h"

#include <glog/logging.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "base/file.h"
#include "base/mutex.h"
#include "base/thread_affinity.h"
#include "base/thread_name.h"
#include "placement/cluster_spec.h"
#include "plan/device_assignment.h"
#include "plan/labels.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/node_runtime_options.h"
#include "runtime/kernels/cpu/cpu_kernels.h"
#include "service/cluster_execution.h"
#include "service/device_pool.h"
#include "service/event_log.h"
#include "service/job_compilation.h"
#include "service/job_data.h"
#include "service/job_execution.h"
#include "service/job_manager_impl.h"
#include "service/job_queue.h"
#include "service/job_recovery.h"
#include "service/job_store.h"
#include "service/submission_check.h"

namespace softwire {
namespace service {
namespace {

constexpr char kServerStopped[] = "the server stopped";

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The cluster a server without one hosts: one cpu device of every core it may use.
proto::Cluster DefaultCluster() {
  return placement::SingleCpuCluster(static_cast<int>(AllowedCores().size()));
}

JobManagerOptions WithCluster(JobManagerOptions options) {
  if (options.cluster.node_size() == 0) options.cluster = DefaultCluster();
  return options;
}

// The submission as the record keeps it: its data files without their bytes.
proto::JobSubmission WithoutDataBytes(const proto::JobSubmission& submission) {
  proto::JobSubmission kept = submission;
  for (proto::DataFile& file : *kept.mutable_data_file()) file.clear_content();
  return kept;
}

}  // namespace

JobManager::Impl::Impl(JobManagerOptions options)
    : options_(WithCluster(std::move(options))), store_(options_.state_directory) {}

// Hands one job's steps to the manager.
class JobManager::Impl::Listener final : public JobExecutionListener {
 public:
  Listener(Impl* impl, ManagedJob* job) : impl_(impl), job_(job) {}
  void OnJobStarted() override {}
  void OnJobStep(const proto::StepMetrics& step) override { impl_->OnStep(job_, step); }
  void OnJobCheckpoint(int64_t step, const std::string& folder) override {
    impl_->OnCheckpoint(job_, step, folder);
  }

 private:
  Impl* const impl_;
  ManagedJob* const job_;
};

JobManager::Impl::~Impl() {
  if (options_.nodes != nullptr) options_.nodes->SetMembershipListener(nullptr);
  std::vector<std::shared_ptr<JobRun>> running;
  {
    MutexLock lock(&mutex_);
    stopping_ = true;
    for (auto& [id, job] : jobs_) {
      if (job->execution) running.push_back(job->execution);
    }
  }
  for (const std::shared_ptr<JobRun>& execution : running) execution->Cancel(kServerStopped);
  for (;;) {
    std::map<std::string, std::thread> threads;
    {
      MutexLock lock(&mutex_);
      threads.swap(threads_);
    }
    if (threads.empty()) break;
    for (auto& [id, thread] : threads) thread.join();
  }
  {
    MutexLock lock(&mutex_);
    jobs_.clear();
  }
  runtime_.reset();
}

Status JobManager::Impl::CreateRuntime() {
  RegisterCpuKernels(&cpu_kernels_);
  std::vector<runtime::DeviceSpec> specs = runtime::ClusterDeviceSpecs(options_.cluster);
  if (specs.empty()) return InvalidArgumentError("the cluster has no devices");
  std::set<std::string> names;
  std::vector<proto::PlanDevice> devices;
  for (const runtime::DeviceSpec& spec : specs) {
    if (!names.insert(plan::DeviceName(spec.device)).second) {
      return InvalidArgumentError("the cluster names device " + plan::DeviceName(spec.device) +
                                  " twice");
    }
    devices.push_back(spec.device);
  }
  runtime::HostingOptions hosting;
  hosting.kernels.cpu = &cpu_kernels_;
  hosting.blas_threads = options_.blas_threads;
  SOFTWIRE_ASSIGN_OR_RETURN(runtime_, runtime::NodeRuntime::Create(runtime::NodeRuntimeOptionsFor(
                                          std::move(specs), hosting)));
  MutexLock lock(&mutex_);
  devices_.Reset(std::move(devices));
  return Status::Ok();
}

void JobManager::Impl::OnNodesChanged() {
  const proto::Cluster live = options_.nodes->LiveCluster();
  const int live_nodes = live.node_size();
  std::vector<proto::PlanDevice> devices;
  for (runtime::DeviceSpec& spec : runtime::ClusterDeviceSpecs(live)) {
    devices.push_back(std::move(spec.device));
  }
  MutexLock lock(&mutex_);
  devices_.SetAvailable(devices);
  if (live_nodes >= options_.nodes_wanted) nodes_arrived_ = true;
  ScheduleLocked();
}

StatusOr<proto::Cluster> JobManager::Impl::ClusterForJobs() const {
  if (options_.nodes == nullptr) return options_.cluster;
  // Every node that joined, live or not: a job that needs more devices than are live now waits
  // for the nodes to come back.
  proto::Cluster known = options_.nodes->KnownCluster();
  {
    MutexLock lock(&mutex_);
    if (nodes_arrived_ && known.node_size() > 0) return known;
  }
  return UnavailableError("the server waits for " + std::to_string(options_.nodes_wanted) +
                          " nodes to join before it takes jobs; " +
                          std::to_string(options_.nodes->LiveNodes()) + " joined so far");
}

Status JobManager::Impl::Start() {
  SOFTWIRE_RETURN_IF_ERROR(store_.Prepare());
  if (options_.nodes == nullptr) SOFTWIRE_RETURN_IF_ERROR(CreateRuntime());
  RecoverJobs();
  if (options_.nodes != nullptr) {
    options_.nodes->SetMembershipListener([this] { OnNodesChanged(); });
    OnNodesChanged();
  }
  MutexLock lock(&mutex_);
  ScheduleLocked();
  return Status::Ok();
}

void JobManager::Impl::RecoverJobs() {
  std::vector<ManagedJob*> queued;
  MutexLock lock(&mutex_);
  for (proto::JobRecord& record : store_.ReadRecords()) {
    auto job = std::make_unique<ManagedJob>();
    const std::string id = record.info().job_id();
    job->directory = store_.JobDirectory(id);
    StatusOr<std::unique_ptr<EventLog>> events =
        EventLog::Open(JobStore::EventsPath(job->directory));
    if (!events.ok()) {
      LOG(WARNING) << "skipping job " << id << ": " << events.status();
      continue;
    }
    job->events = std::move(*events);
    job->record = std::move(record);
    proto::JobInfo* info = job->record.mutable_info();
    last_job_number_ = std::max(last_job_number_, JobNumber(id));
    RecoveredJob recovered =
        RecoverJob(job->directory, job->events->events(), job->events->ended(), &job->record);
    switch (recovered.action) {
      case RecoveredJob::Action::kKeep:
        break;
      case RecoveredJob::Action::kRewriteRecord:
        WriteRecordLocked(job.get());
        break;
      case RecoveredJob::Action::kFail:
        EndJobLocked(job.get(), std::move(recovered.failure));
        break;
      case RecoveredJob::Action::kQueue:
        job->devices_needed = std::max(1, recovered.plan->device_size());
        job->plan = std::move(recovered.plan);
        queued.push_back(job.get());
        break;
    }
    info->set_last_event(job->events->last_sequence());
    if (!info->idempotency_key().empty()) job_by_key_[info->idempotency_key()] = id;
    jobs_[id] = std::move(job);
  }
  std::sort(queued.begin(), queued.end(), [](const ManagedJob* a, const ManagedJob* b) {
    const proto::JobInfo& x = a->record.info();
    const proto::JobInfo& y = b->record.info();
    if (x.submitted_unix() != y.submitted_unix()) return x.submitted_unix() < y.submitted_unix();
    return JobNumber(x.job_id()) < JobNumber(y.job_id());
  });
  for (ManagedJob* job : queued) queue_.Push(job->record.info().job_id(), job->devices_needed);
}

StatusOr<SubmittedJob> JobManager::Impl::Submit(const proto::JobSubmission& submission) {
  ReapThreads();
  const JobLimits& limits = options_.limits;
  SOFTWIRE_RETURN_IF_ERROR(CheckGraphSize(submission, limits));
  const std::string& key = submission.idempotency_key();
  std::string existing;
  SOFTWIRE_RETURN_IF_ERROR(WaitForIdempotencyKey(key, &existing));
  if (!existing.empty()) {
    SOFTWIRE_ASSIGN_OR_RETURN(proto::JobInfo info, GetJob(existing));
    return SubmittedJob{std::move(info), true};
  }
  std::string job_id;
  {
    MutexLock lock(&mutex_);
    if (queue_.size() >= limits.max_queued_jobs) {
      if (!key.empty()) keys_in_submission_.erase(key);
      changed_.NotifyAll();
      return ResourceExhaustedError("the queue is full (" + std::to_string(limits.max_queued_jobs) +
                                    " jobs)");
    }
    job_id = "job-" + std::to_string(++last_job_number_);
  }
  StatusOr<SubmittedJob> accepted = Accept(submission, job_id);
  if (!key.empty()) ReleaseIdempotencyKey(key);
  return accepted;
}

Status JobManager::Impl::WaitForIdempotencyKey(const std::string& key, std::string* existing) {
  if (key.empty()) return Status::Ok();
  MutexLock lock(&mutex_);
  for (;;) {
    auto found = job_by_key_.find(key);
    if (found != job_by_key_.end()) {
      *existing = found->second;
      return Status::Ok();
    }
    if (keys_in_submission_.insert(key).second) return Status::Ok();
    changed_.Wait(&lock);  // Another submission with this key is being accepted.
  }
}

void JobManager::Impl::ReleaseIdempotencyKey(const std::string& key) {
  MutexLock lock(&mutex_);
  keys_in_submission_.erase(key);
  changed_.NotifyAll();
}

StatusOr<SubmittedJob> JobManager::Impl::Accept(const proto::JobSubmission& submission,
                                                const std::string& job_id) {
  const std::string directory = store_.JobDirectory(job_id);
  SOFTWIRE_ASSIGN_OR_RETURN(const proto::Cluster cluster, ClusterForJobs());
  SOFTWIRE_ASSIGN_OR_RETURN(CheckedSubmission checked,
                            CheckSubmission(submission, cluster, JobStore::DataDirectory(directory),
                                            options_.data_root, options_.limits));
  CompiledJob& compiled = checked.compiled;
  const JobData& data = checked.data;

  // Staged whole, then committed: a killed server leaves the job recorded whole or not at all.
  const std::string staging = store_.StagingDirectory(job_id);
  auto job = std::make_unique<ManagedJob>();
  job->directory = directory;
  job->devices_needed = compiled.devices;
  proto::JobInfo* info = job->record.mutable_info();
  info->set_job_id(job_id);
  info->set_name(compiled.name);
  info->set_state(proto::JOB_STATE_QUEUED);
  info->set_idempotency_key(submission.idempotency_key());
  info->set_steps(compiled.plan.schedule().steps());
  info->set_max_restarts(submission.settings().max_restarts());
  info->set_last_loss(std::numeric_limits<double>::quiet_NaN());
  *info->mutable_plan() = compiled.summary;
  *job->record.mutable_submission() = WithoutDataBytes(submission);
  auto stage = [&]() -> Status {
    SOFTWIRE_RETURN_IF_ERROR(MakeDirectories(staging));
    SOFTWIRE_RETURN_IF_ERROR(WriteJobData(data, JobStore::DataDirectory(staging)));
    SOFTWIRE_RETURN_IF_ERROR(JobStore::WritePlan(staging, compiled.plan));
    SOFTWIRE_ASSIGN_OR_RETURN(job->events, EventLog::Open(JobStore::EventsPath(staging)));
    proto::JobEvent event;
    *event.mutable_compiled() = compiled.summary;
    return job->events->Append(std::move(event)).status();
  };
  Status staged = stage();
  if (!staged.ok()) {
    store_.Remove(staging);
    return staged;
  }
  job->plan = std::make_unique<proto::Plan>(std::move(compiled.plan));

  // Queued and committed under the lock, so queue order is submission order.
  MutexLock lock(&mutex_);
  auto fail = [&](Status status) {
    store_.Remove(staging);
    return status;
  };
  if (queue_.size() >= options_.limits.max_queued_jobs) {
    return fail(ResourceExhaustedError("the queue is full (" +
                                       std::to_string(options_.limits.max_queued_jobs) + " jobs)"));
  }
  if (stopping_) return fail(UnavailableError("the server is stopping"));
  proto::JobEvent queued;
  queued.mutable_queued()->set_position(queue_.size());
  StatusOr<proto::JobEvent> appended = job->events->Append(std::move(queued));
  if (!appended.ok()) return fail(appended.status());
  info->set_submitted_unix(appended->time_unix());
  info->set_last_event(appended->sequence());
  Status recorded = JobStore::WriteRecord(staging, job->record);
  if (recorded.ok()) recorded = store_.Commit(job_id);
  if (!recorded.ok()) return fail(recorded);
  ManagedJob* accepted = job.get();
  if (!submission.idempotency_key().empty()) {
    job_by_key_[submission.idempotency_key()] = job_id;
  }
  queue_.Push(job_id, accepted->devices_needed);
  jobs_[job_id] = std::move(job);
  SubmittedJob submitted{InfoLocked(*accepted), false};
  ScheduleLocked();
  return submitted;
}

void JobManager::Impl::ScheduleLocked() {
  if (stopping_) return;
  if (options_.nodes != nullptr && !nodes_arrived_) return;
  std::vector<bool> free = devices_.Free();
  for (const JobQueue::Start& start : queue_.TakeStartable(&free)) {
    ManagedJob* job = FindLocked(start.job_id);
    CHECK(job != nullptr) << "queued job " << start.job_id << " is unknown";
    StartJobLocked(job, start.devices);
  }
}

void JobManager::Impl::StartJobLocked(ManagedJob* job, const std::vector<int>& devices) {
  const std::string id = job->record.info().job_id();
  std::vector<proto::PlanDevice> targets;
  for (int device : devices) targets.push_back(devices_.device(device));
  JobRunSpec spec;
  spec.job_id = id;
  spec.plan = std::move(*job->plan);
  job->plan.reset();
  spec.data_directory = JobStore::DataDirectory(job->directory);
  spec.results_directory = JobStore::ResultsDirectory(job->directory);
  spec.settings = job->record.submission().settings();
  Status assigned = plan::AssignDevices(targets, &spec.plan);
  if (!assigned.ok()) {
    proto::JobEvent failed;
    failed.mutable_failed()->set_error("cannot load job '" + spec.plan.job_name() +
                                       "': " + assigned.message());
    failed.mutable_failed()->set_code(StatusCodeName(assigned.code()));
    EndJobLocked(job, std::move(failed));
    return;
  }
  proto::JobInfo* info = job->record.mutable_info();
  info->set_state(proto::JOB_STATE_RUNNING);
  info->set_started_unix(UnixNow());
  info->set_max_restarts(job->record.submission().settings().max_restarts());
  info->clear_device();
  proto::JobEvent started;
  for (const proto::PlanDevice& device : targets) {
    info->add_device(plan::DeviceName(device));
    started.mutable_started()->add_device(plan::DeviceName(device));
  }
  devices_.Hold(devices, id);
  job->devices = devices;
  StatusOr<proto::JobEvent> appended = job->events->Append(std::move(started));
  if (!appended.ok()) LOG(WARNING) << "job " << id << ": " << appended.status();
  WriteRecordLocked(job);
  job->execution = NewRun(job, std::move(spec));
  // Named for the job ("sw:job-7"): it would otherwise carry the name of whichever thread
  // submitted it (gRPC's, the web view's), and top -H or a CPU count per component would lie.
  threads_[id] = std::thread([this, job, execution = job->execution, name = "sw:" + id] {
    NameCurrentThread(name);
    RunJob(job, execution);
  });
}

std::shared_ptr<JobRun> JobManager::Impl::NewRun(ManagedJob* job, JobRunSpec spec) {
  // The listener lives as long as the execution that calls it (its deleter holds it).
  auto listener = std::make_shared<Listener>(this, job);
  JobRun* run = nullptr;
  if (options_.nodes != nullptr) {
    run = new ClusterExecution(options_.nodes, std::move(spec), listener.get());
  } else {
    run = new JobExecution(runtime_.get(), std::move(spec), listener.get());
  }
  return std::shared_ptr<JobRun>(run, [listener](JobRun* execution) { delete execution; });
}

void JobManager::Impl::RunJob(ManagedJob* job, std::shared_ptr<JobRun> execution) {
  JobOutcome outcome = execution->Run();
  // A lost node with restarts left: the job runs again on the live nodes (job_restart.cc).
  while (!outcome.status.ok() && !outcome.lost_node.empty()) {
    execution = RestartJob(job, &outcome);
    if (execution == nullptr) break;
    outcome = execution->Run();
  }
  proto::JobEvent terminal;
  if (outcome.status.ok()) {
    proto::JobFinished* finished = terminal.mutable_finished();
    finished->set_steps(outcome.steps);
    finished->set_seconds(outcome.seconds);
    finished->set_samples_per_second(outcome.samples_per_second);
    *finished->mutable_last_step() = outcome.last_step;
  } else if (outcome.cancelled) {
    terminal.mutable_cancelled()->set_reason(outcome.cancel_reason);
  } else {
    terminal.mutable_failed()->set_error(outcome.status.message());
    terminal.mutable_failed()->set_code(StatusCodeName(outcome.status.code()));
  }
  MutexLock lock(&mutex_);
  EndJobLocked(job, std::move(terminal));
  ended_threads_.push_back(job->record.info().job_id());
  ScheduleLocked();
}

void JobManager::Impl::EndJobLocked(ManagedJob* job, proto::JobEvent terminal) {
  proto::JobInfo* info = job->record.mutable_info();
  StatusOr<proto::JobEvent> appended = job->events->Append(terminal);
  if (!appended.ok()) LOG(WARNING) << "job " << info->job_id() << ": " << appended.status();
  info->set_state(StateOfTerminalEvent(terminal));
  info->set_ended_unix(appended.ok() ? appended->time_unix() : UnixNow());
  if (terminal.has_failed()) info->set_error(terminal.failed().error());
  if (terminal.has_cancelled()) info->set_error(terminal.cancelled().reason());
  devices_.Release(job->devices);
  job->devices.clear();
  job->execution.reset();
  job->plan.reset();
  WriteRecordLocked(job);
  changed_.NotifyAll();
  DropOldJobsLocked();
}

void JobManager::Impl::OnCheckpoint(ManagedJob* job, int64_t step, const std::string& folder) {
  proto::JobEvent event;
  event.mutable_checkpoint()->set_step(step);
  event.mutable_checkpoint()->set_path(folder);
  StatusOr<proto::JobEvent> appended = job->events->Append(std::move(event));
  if (!appended.ok()) LOG(WARNING) << "checkpoint of step " << step << ": " << appended.status();
}

void JobManager::Impl::OnStep(ManagedJob* job, const proto::StepMetrics& step) {
  proto::JobEvent event;
  *event.mutable_step() = step;
  StatusOr<proto::JobEvent> appended = job->events->Append(std::move(event));
  MutexLock lock(&mutex_);
  proto::JobInfo* info = job->record.mutable_info();
  if (!appended.ok()) {
    LOG(WARNING) << "job " << info->job_id() << ": " << appended.status();
    return;
  }
  info->set_completed_steps(info->completed_steps() + 1);
  info->set_last_loss(step.loss());
  info->set_samples_per_second(step.samples_per_second());
}

void JobManager::Impl::WriteRecordLocked(ManagedJob* job) {
  job->record.mutable_info()->set_last_event(job->events->last_sequence());
  Status written = JobStore::WriteRecord(job->directory, job->record);
  if (!written.ok()) LOG(WARNING) << "job " << job->record.info().job_id() << ": " << written;
}

void JobManager::Impl::DropOldJobsLocked() {
  const int64_t kept = options_.limits.max_kept_jobs;
  if (kept <= 0 || static_cast<int64_t>(jobs_.size()) <= kept) return;
  std::vector<ManagedJob*> ended;
  for (auto& [id, job] : jobs_) {
    if (JobStateIsTerminal(job->record.info().state())) ended.push_back(job.get());
  }
  std::sort(ended.begin(), ended.end(), [](const ManagedJob* a, const ManagedJob* b) {
    return JobNumber(a->record.info().job_id()) < JobNumber(b->record.info().job_id());
  });
  for (ManagedJob* job : ended) {
    if (static_cast<int64_t>(jobs_.size()) <= kept) break;
    const std::string id = job->record.info().job_id();
    if (threads_.count(id) > 0) continue;  // Its thread still ends it; dropped later.
    job_by_key_.erase(job->record.info().idempotency_key());
    store_.Remove(job->directory);
    jobs_.erase(id);
  }
}

void JobManager::Impl::ReapThreads() {
  std::vector<std::thread> ended;
  {
    MutexLock lock(&mutex_);
    for (const std::string& id : ended_threads_) {
      auto found = threads_.find(id);
      if (found == threads_.end()) continue;
      ended.push_back(std::move(found->second));
      threads_.erase(found);
    }
    ended_threads_.clear();
  }
  for (std::thread& thread : ended) thread.join();
}

StatusOr<proto::JobInfo> JobManager::Impl::Cancel(const std::string& job_id,
                                                  const std::string& reason) {
  const std::string why = reason.empty() ? "cancelled by a client" : reason;
  std::shared_ptr<JobRun> execution;
  {
    MutexLock lock(&mutex_);
    ManagedJob* job = FindLocked(job_id);
    if (job == nullptr) return NotFoundError("no job '" + job_id + "'");
    if (JobStateIsTerminal(job->record.info().state())) return InfoLocked(*job);
    if (queue_.Remove(job_id)) {
      proto::JobEvent cancelled;
      cancelled.mutable_cancelled()->set_reason(why);
      EndJobLocked(job, std::move(cancelled));
      return InfoLocked(*job);
    }
    execution = job->execution;
    job->cancel_reason = why;  // Also stops a restart waiting for devices (job_restart.cc).
    changed_.NotifyAll();
  }
  if (execution != nullptr) execution->Cancel(why);
  // Returns once the job's thread recorded the end: its hosted plan is gone by then.
  MutexLock lock(&mutex_);
  for (;;) {
    ManagedJob* job = FindLocked(job_id);
    if (job == nullptr) return NotFoundError("no job '" + job_id + "'");
    if (JobStateIsTerminal(job->record.info().state())) return InfoLocked(*job);
    changed_.Wait(&lock);
  }
}

StatusOr<std::unique_ptr<JobManager>> JobManager::Start(JobManagerOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  SOFTWIRE_RETURN_IF_ERROR(impl->Start());
  return std::unique_ptr<JobManager>(new JobManager(std::move(impl)));
}

JobManager::JobManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

JobManager::~JobManager() = default;

StatusOr<SubmittedJob> JobManager::Submit(const proto::JobSubmission& submission) {
  return impl_->Submit(submission);
}

StatusOr<std::vector<proto::JobEvent>> JobManager::WaitForEvents(
    const std::string& job_id, int64_t from_sequence, std::chrono::milliseconds timeout) {
  return impl_->WaitForEvents(job_id, from_sequence, timeout);
}

StatusOr<proto::JobInfo> JobManager::GetJob(const std::string& job_id) const {
  return impl_->GetJob(job_id);
}

std::vector<proto::JobInfo> JobManager::ListJobs(const std::vector<proto::JobState>& states,
                                                 int limit) const {
  return impl_->ListJobs(states, limit);
}

StatusOr<proto::JobInfo> JobManager::Cancel(const std::string& job_id, const std::string& reason) {
  return impl_->Cancel(job_id, reason);
}

std::vector<proto::DeviceInfo> JobManager::ListDevices() const {
  return impl_->ListDevices();
}

int64_t JobManager::QueuedJobs() const {
  return impl_->QueuedJobs();
}

StatusOr<StoredResults> JobManager::GetResults(const std::string& job_id) const {
  return impl_->GetResults(job_id);
}

StatusOr<runtime::JobWaitStates> JobManager::DescribeWaits(const std::string& job_id,
                                                           std::chrono::milliseconds timeout) {
  return impl_->DescribeWaits(job_id, timeout);
}

const JobManagerOptions& JobManager::options() const {
  return impl_->options();
}

}  // namespace service
}  // namespace softwire
