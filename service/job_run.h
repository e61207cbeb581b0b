// JobRun: one served job's run, wherever it runs: on the server's own NodeRuntime
// (JobExecution) or on joined node agents (ClusterExecution). JobManager starts one per job on
// the job's thread and talks to it only through this interface.
//
// Contract of every implementation: Run is called once, on the job's thread, and returns when
// the job's actors are gone and its devices and memory are free, however it ended; results/
// (metrics.jsonl at least) is written by then. Cancel, DescribeWaits and AllocatedBytes may be
// called from any thread while Run runs, and before and after it.
#ifndef SOFTWIRE_SERVICE_JOB_RUN_H_
#define SOFTWIRE_SERVICE_JOB_RUN_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"
#include "proto/jobs.pb.h"
#include "proto/plan.pb.h"
#include "runtime/host/stall_report.h"
#include "runtime/host/training_state.h"

namespace softwire {
namespace service {

// What a job runs with.
struct JobRunSpec {
  std::string job_id;
  // The compiled plan, already on the devices it was given (plan::AssignDevices).
  proto::Plan plan;
  // The job's data directory: its DataRoot, confined.
  std::string data_directory;
  // Where its results go; created.
  std::string results_directory;
  proto::RunSettings settings;
  // A restarted job on nodes (ClusterExecution only): the state it resumes from (its plan's
  // schedule then counts only the steps after resume->step, which number on from it), and
  // the metrics.jsonl lines of the steps before, which its metrics.jsonl starts with.
  std::optional<runtime::TrainingState> resume;
  std::string metrics_before;
};

// Told what happens, on the thread that calls Run. Calls must be quick.
class JobExecutionListener {
 public:
  virtual ~JobExecutionListener() = default;
  // The actors started.
  virtual void OnJobStarted() = 0;
  virtual void OnJobStep(const proto::StepMetrics& step) = 0;
  // A checkpoint of `step` steps was written to `folder` (relative to the results). From the
  // run's checkpoint writer thread, while steps go on.
  virtual void OnJobCheckpoint(int64_t step, const std::string& folder) {}
};

// How a run ended.
struct JobOutcome {
  // OK: every step completed and the results are written. Otherwise why not, as `softwire
  // run` words it.
  Status status;
  // Cancel was called (status is then Cancelled) and with what reason.
  bool cancelled = false;
  std::string cancel_reason;
  int64_t steps = 0;   // Completed.
  double seconds = 0;  // From the actors' start to the end.
  double samples_per_second = 0;
  proto::StepMetrics last_step;
  // A job on nodes that failed because a node was lost: that node (a restart may follow).
  std::string lost_node;
};

class JobRun {
 public:
  virtual ~JobRun() = default;
  // Runs the job to its end (see the file comment). Call once.
  virtual JobOutcome Run() = 0;
  // Stops the run (or keeps it from starting); Run then ends cancelled. No effect after Run.
  virtual void Cancel(const std::string& reason) = 0;
  // What every unfinished actor waits for; FailedPrecondition when the actors do not run.
  virtual StatusOr<runtime::JobWaitStates> DescribeWaits(std::chrono::milliseconds timeout) = 0;
  // Bytes the job holds on the device named `device` ("node0/cpu:1"); 0 when none.
  virtual int64_t AllocatedBytes(const std::string& device) const = 0;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_JOB_RUN_H_
