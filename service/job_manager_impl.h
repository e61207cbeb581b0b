// JobManager::Impl: the job manager's state and its two halves, shared by the files that
// implement them: job_manager.cc (the life of jobs: start, recovery, submission, scheduling,
// runs, cancellation) and job_manager_queries.cc (what clients read: jobs, events, devices,
// results, live diagnosis). Private to service/; nothing else includes it.
//
// Threading: every member marked GUARDED_BY is read and written under `mutex_`; the methods say
// which they need (REQUIRES/EXCLUDES).
#ifndef SOFTWIRE_SERVICE_JOB_MANAGER_IMPL_H_
#define SOFTWIRE_SERVICE_JOB_MANAGER_IMPL_H_

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "runtime/host/node_runtime.h"
#include "runtime/kernels/kernel.h"
#include "service/device_pool.h"
#include "service/event_log.h"
#include "service/job_manager.h"
#include "service/job_queue.h"
#include "service/job_run.h"
#include "service/job_store.h"

namespace softwire {
namespace service {

// One job as the manager knows it.
struct ManagedJob {
  proto::JobRecord record;  // info() kept current; written at every change of state.
  std::string directory;    // jobs/<id>.
  int devices_needed = 1;
  // Shared with watchers, which may wait on it after the job was deleted (max_kept_jobs).
  std::shared_ptr<EventLog> events;
  // The compiled plan while queued (read back from plan.pb after a restart).
  std::unique_ptr<proto::Plan> plan;
  // While running. Shared with Cancel, DescribeWaits and ListDevices, which call it without the
  // manager's lock while the job's thread runs it.
  std::shared_ptr<JobRun> execution;
  std::vector<int> devices;  // Indices into the server's devices, while running.
  // Set by Cancel: why (a restart waiting for devices gives up with it).
  std::string cancel_reason;
};

class JobManager::Impl {
 public:
  explicit Impl(JobManagerOptions options);
  ~Impl();

  Status Start();
  StatusOr<SubmittedJob> Submit(const proto::JobSubmission& submission);
  StatusOr<std::vector<proto::JobEvent>> WaitForEvents(const std::string& job_id, int64_t from,
                                                       std::chrono::milliseconds timeout);
  StatusOr<proto::JobInfo> GetJob(const std::string& job_id) const;
  std::vector<proto::JobInfo> ListJobs(const std::vector<proto::JobState>& states, int limit) const;
  StatusOr<proto::JobInfo> Cancel(const std::string& job_id, const std::string& reason);
  std::vector<proto::DeviceInfo> ListDevices() const;
  int64_t QueuedJobs() const;
  StatusOr<StoredResults> GetResults(const std::string& job_id) const;
  StatusOr<runtime::JobWaitStates> DescribeWaits(const std::string& job_id,
                                                 std::chrono::milliseconds timeout);
  const JobManagerOptions& options() const { return options_; }

 private:
  class Listener;

  // Submit's steps.
  Status WaitForIdempotencyKey(const std::string& key, std::string* existing) EXCLUDES(mutex_);
  void ReleaseIdempotencyKey(const std::string& key) EXCLUDES(mutex_);
  StatusOr<SubmittedJob> Accept(const proto::JobSubmission& submission, const std::string& job_id)
      EXCLUDES(mutex_);

  // Start's steps.
  Status CreateRuntime();
  // The joined nodes changed: their devices become available or not, and jobs may start.
  void OnNodesChanged() EXCLUDES(mutex_);
  // The devices a submission compiles for: the cluster hosted here, or every joined node's.
  StatusOr<proto::Cluster> ClusterForJobs() const;
  void RecoverJobs() EXCLUDES(mutex_);

  // Starts the queued jobs that fit the free devices.
  void ScheduleLocked() REQUIRES(mutex_);
  void StartJobLocked(ManagedJob* job, const std::vector<int>& devices) REQUIRES(mutex_);
  // The job's thread: runs it, records how it ended, frees its devices.
  void RunJob(ManagedJob* job, std::shared_ptr<JobRun> execution) EXCLUDES(mutex_);
  // A JobRun of `spec` for `job`: a ClusterExecution with nodes, else a JobExecution.
  std::shared_ptr<JobRun> NewRun(ManagedJob* job, JobRunSpec spec);
  // job_restart.cc: after `outcome` (a lost node), the job's next run on the live nodes from
  // its latest checkpoint, with its JobRestarted events; null when it is not restarted (no
  // restarts left, cancelled, the server stopping, no devices within the wait), `outcome`
  // then saying why it failed.
  std::shared_ptr<JobRun> RestartJob(ManagedJob* job, JobOutcome* outcome) EXCLUDES(mutex_);
  // The devices a restart of `job` runs on: those it holds on live nodes, then free ones, in
  // the pool's order; empty while fewer than `needed` are there.
  std::vector<int> RestartDevicesLocked(const ManagedJob& job, int needed) const REQUIRES(mutex_);
  void EndJobLocked(ManagedJob* job, proto::JobEvent terminal) REQUIRES(mutex_);
  void OnStep(ManagedJob* job, const proto::StepMetrics& step) EXCLUDES(mutex_);
  void OnCheckpoint(ManagedJob* job, int64_t step, const std::string& folder) EXCLUDES(mutex_);
  void WriteRecordLocked(ManagedJob* job) REQUIRES(mutex_);
  void DropOldJobsLocked() REQUIRES(mutex_);
  // Joins the threads of jobs that ended.
  void ReapThreads() EXCLUDES(mutex_);

  ManagedJob* FindLocked(const std::string& job_id) const REQUIRES(mutex_);
  proto::JobInfo InfoLocked(const ManagedJob& job) const REQUIRES(mutex_);

  const JobManagerOptions options_;
  const JobStore store_;
  runtime::KernelRegistry cpu_kernels_;
  std::unique_ptr<runtime::NodeRuntime> runtime_;  // Null when nodes run the jobs.

  mutable Mutex mutex_;
  CondVar changed_;  // A key was released, or a job ended.
  std::map<std::string, std::unique_ptr<ManagedJob>> jobs_ GUARDED_BY(mutex_);
  std::map<std::string, std::string> job_by_key_ GUARDED_BY(mutex_);
  std::set<std::string> keys_in_submission_ GUARDED_BY(mutex_);
  JobQueue queue_ GUARDED_BY(mutex_);
  DevicePool devices_ GUARDED_BY(mutex_);
  bool nodes_arrived_ GUARDED_BY(mutex_) = false;  // options_.nodes_wanted joined once.
  int64_t last_job_number_ GUARDED_BY(mutex_) = 0;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::map<std::string, std::thread> threads_ GUARDED_BY(mutex_);
  std::vector<std::string> ended_threads_ GUARDED_BY(mutex_);
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_JOB_MANAGER_IMPL_H_
