// JobManager: the job service without its transport. It takes job submissions, checks and
// compiles them, keeps their records, events and results in a state directory, queues them,
// and runs each on devices that are free, several jobs at once on disjoint devices: devices of
// its own NodeRuntime, or of the node agents that joined (JobManagerOptions::nodes; then each
// job runs as a ClusterExecution). `softwire serve` puts the gRPC JobService (service/rpc/) in
// front of it; tests drive it directly.
//
//   JobManagerOptions options;
//   options.state_directory = "/var/lib/softwire";
//   options.cluster = *placement::LoadClusterSpec("2cpu");
//   StatusOr<std::unique_ptr<JobManager>> jobs = JobManager::Start(std::move(options));
//   StatusOr<SubmittedJob> submitted = (*jobs)->Submit(submission);
//   int64_t next = 1;
//   for (;;) {   // follow its events until the terminal one
//     StatusOr<std::vector<proto::JobEvent>> events =
//         (*jobs)->WaitForEvents(submitted->job.job_id(), next, std::chrono::seconds(1));
//     ...; next = events->back().sequence() + 1;
//   }
//
// The state directory (docs/API.md, "State directory"): jobs/<job id>/record.pb (JobRecord,
// replaced atomically at every change of state), events.log (the job's events, appended, one
// length-prefixed JobEvent per write; a torn last record is ignored when read back), plan.pb,
// data/ (uploaded files, and links to the data root's files the job names), results/
// (metrics.jsonl, variables/<name>.npy, trace.json, trace.json.summary.txt). Nothing in it is
// half-written after a crash: a job is either recorded whole or not at all. Durable against a
// killed server (SIGKILL), not against a lost machine: nothing is fsynced.
//
// Start reads the state directory back: every job is listed again; jobs that were queued are
// queued again in submission order; a job that was running when the server died is marked
// failed ("the server stopped while the job was running").
//
// Errors (base/status.h codes, which the gRPC layer maps one to one): InvalidArgument for a
// bad job, naming the file line, op and field as `softwire run` does, and for a data path
// outside the data root; NotFound for an unknown job id; FailedPrecondition for a job that does
// not fit the devices (more devices than the server hosts, more memory than a device has) and
// for results a job does not have; ResourceExhausted for a full queue or a submission over the
// limits. A job that fails however badly never takes the manager down.
//
// Threading: every method is thread-safe. Jobs run on threads of their own; Submit compiles on
// the caller's thread. The destructor cancels running jobs ("the server stopped"), waits for
// them, and leaves queued jobs queued in the state directory.
#ifndef SOFTWIRE_SERVICE_JOB_MANAGER_H_
#define SOFTWIRE_SERVICE_JOB_MANAGER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/cluster.pb.h"
#include "proto/jobs.pb.h"
#include "proto/tensor.pb.h"
#include "runtime/host/stall_report.h"
#include "service/node_registry.h"
#include "service/stored_results.h"
#include "service/submission_check.h"  // JobLimits

namespace softwire {
namespace service {

struct JobManagerOptions {
  // Where records, events and results live. Created if missing. Required.
  std::string state_directory;
  // The devices jobs run on. Empty: one node "node0" with one cpu device of every core this
  // process may use.
  proto::Cluster cluster;
  // The only directory whose files a job may name without sending them (symlinks that lead out
  // of it are refused too). Empty: a job may only use data it sends.
  std::string data_root;
  JobLimits limits;
  // BLAS's own pool (runtime::NodeRuntimeOptions::blas_threads).
  int blas_threads = 0;
  // Joined node agents run the jobs instead of devices of this process (`serve --nodes N`):
  // jobs compile for the live nodes' devices and run as ClusterExecutions; `cluster` is not
  // hosted. Borrowed; outlives the manager. Null: jobs run on `cluster` in this process.
  NodeRegistry* nodes = nullptr;
  // With `nodes`: submissions are refused (Unavailable) and no job starts until this many
  // nodes have joined once; afterwards jobs run on whichever nodes are live, and a job needing
  // more devices than are free waits.
  int nodes_wanted = 1;
};

// The answer to a submission.
struct SubmittedJob {
  proto::JobInfo job;
  // The idempotency key named a job submitted before; nothing new was queued.
  bool existing = false;
};

class JobManager {
 public:
  // Opens (or creates) the state directory, reads every job back, creates the devices and
  // starts the scheduler. InvalidArgument for a state directory that cannot be used or a bad
  // cluster; Unimplemented for devices this build cannot host.
  static StatusOr<std::unique_ptr<JobManager>> Start(JobManagerOptions options);
  ~JobManager();
  JobManager(const JobManager&) = delete;
  JobManager& operator=(const JobManager&) = delete;

  // Checks, compiles, stores and queues a job; returns once it is queued (its first events,
  // compiled and queued, are in its feed). The file header lists the errors. Job ids are
  // "job-1", "job-2", ... in the order submissions are taken (a refused submission may use up a
  // number); a restarted manager goes on after the highest it finds.
  StatusOr<SubmittedJob> Submit(const proto::JobSubmission& submission);

  // The job's events with sequence >= `from_sequence` (1 is the first): at once when there are
  // any, else the first ones that come within `timeout`; empty when none came. NotFound for an
  // unknown job. A caller following a job stops after its terminal event (finished, failed,
  // cancelled), which is always the last.
  StatusOr<std::vector<proto::JobEvent>> WaitForEvents(const std::string& job_id,
                                                       int64_t from_sequence,
                                                       std::chrono::milliseconds timeout);

  StatusOr<proto::JobInfo> GetJob(const std::string& job_id) const;
  // Newest first; only jobs in `states` unless empty; at most `limit` unless 0.
  std::vector<proto::JobInfo> ListJobs(const std::vector<proto::JobState>& states, int limit) const;

  // Stops a queued or running job and returns once its actors have stopped and its devices and
  // memory are free; the job's feed ends with a cancelled event saying `reason`. A job that
  // already ended is returned as it is.
  StatusOr<proto::JobInfo> Cancel(const std::string& job_id, const std::string& reason);

  // The devices and which job holds each, and the number of queued jobs.
  std::vector<proto::DeviceInfo> ListDevices() const;
  int64_t QueuedJobs() const;

  // What a job left: FailedPrecondition while it is queued or running.
  StatusOr<StoredResults> GetResults(const std::string& job_id) const;

  // What every unfinished actor of a running job waits for (live diagnosis). NotFound for an
  // unknown job; FailedPrecondition when it is not running.
  StatusOr<runtime::JobWaitStates> DescribeWaits(const std::string& job_id,
                                                 std::chrono::milliseconds timeout);

  // The options it runs with: `cluster` is the one it hosts (DefaultCluster's when none was
  // given).
  const JobManagerOptions& options() const;

 private:
  class Impl;
  explicit JobManager(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_JOB_MANAGER_H_
