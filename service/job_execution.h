// JobExecution: one served job's run on the server's NodeRuntime, from hosting its plan on the
// devices it was given to the files it leaves: HostedPlan (NodeRuntime::Host, its data confined
// to the job's data directory), one runtime::Execution whose JobEvents become the job's step
// metrics, then results/ (metrics.jsonl, variables/<name>.npy, trace.json with its summary and
// timeline) and, before Run returns, the hosted plan destroyed: the devices are released and
// the job's memory freed.
//
//   JobExecution run(runtime, std::move(spec), &listener);
//   JobOutcome outcome = run.Run();          // on the job's own thread
//   run.Cancel("cancelled by a client");     // from any other thread, meanwhile
//
// The numbers are `softwire run`'s: steps are timed by runtime::StepTimer and written by
// runtime::MetricsJsonLine, variables saved by runtime::SaveVariables, traces by
// trace::WriteTraceFiles, a plan that cannot be hosted fails with "cannot load job 'NAME': ...".
//
// Threading: Run on one thread (the listener is called on it); Cancel, DescribeWaits and
// AllocatedBytes from any thread. Ownership: borrows the runtime and the listener.
#ifndef SOFTWIRE_SERVICE_JOB_EXECUTION_H_
#define SOFTWIRE_SERVICE_JOB_EXECUTION_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "proto/jobs.pb.h"
#include "proto/plan.pb.h"
#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/stall_report.h"
#include "runtime/host/step_results.h"

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
};

class JobExecution {
 public:
  JobExecution(runtime::NodeRuntime* runtime, JobRunSpec spec, JobExecutionListener* listener);
  ~JobExecution();
  JobExecution(const JobExecution&) = delete;
  JobExecution& operator=(const JobExecution&) = delete;

  // Hosts, runs, writes the results and lets go of the devices. Call once.
  JobOutcome Run() EXCLUDES(mutex_);
  // Stops the run (or keeps it from starting); Run then ends cancelled. No effect after Run.
  void Cancel(const std::string& reason) EXCLUDES(mutex_);
  // What every unfinished actor waits for; FailedPrecondition when the actors do not run.
  StatusOr<runtime::JobWaitStates> DescribeWaits(std::chrono::milliseconds timeout)
      EXCLUDES(mutex_);
  // Bytes the job holds on the device named `device` ("node0/cpu:1"); 0 when none.
  int64_t AllocatedBytes(const std::string& device) const EXCLUDES(mutex_);

  const JobRunSpec& spec() const { return spec_; }

 private:
  class StepEvents;
  // Writes metrics.jsonl, the trace (when traced) and, after a run that succeeded, the
  // variables.
  Status WriteResults(const Status& run_status, const std::string& metrics,
                      runtime::Execution* execution) EXCLUDES(mutex_);
  void Release() EXCLUDES(mutex_);

  runtime::NodeRuntime* const runtime_;
  const JobRunSpec spec_;
  JobExecutionListener* const listener_;
  mutable Mutex mutex_;
  std::unique_ptr<runtime::HostedPlan> hosted_ GUARDED_BY(mutex_);
  std::unique_ptr<runtime::Execution> execution_ GUARDED_BY(mutex_);
  bool cancelled_ GUARDED_BY(mutex_) = false;
  std::string cancel_reason_ GUARDED_BY(mutex_);
  bool ended_ GUARDED_BY(mutex_) = false;
};

}  // namespace service
}  // namespace softwire

#endif  // SOFTWIRE_SERVICE_JOB_EXECUTION_H_
