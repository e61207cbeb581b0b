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
#include "service/job_run.h"

namespace softwire {
namespace service {

class JobExecution final : public JobRun {
 public:
  JobExecution(runtime::NodeRuntime* runtime, JobRunSpec spec, JobExecutionListener* listener);
  ~JobExecution();
  JobExecution(const JobExecution&) = delete;
  JobExecution& operator=(const JobExecution&) = delete;

  // JobRun. Run hosts, runs, writes the results and lets go of the devices.
  JobOutcome Run() override EXCLUDES(mutex_);
  void Cancel(const std::string& reason) override EXCLUDES(mutex_);
  StatusOr<runtime::JobWaitStates> DescribeWaits(std::chrono::milliseconds timeout) override
      EXCLUDES(mutex_);
  int64_t AllocatedBytes(const std::string& device) const override EXCLUDES(mutex_);

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
