// Job: one run of one whole plan in this process, from loaded plan to clean shutdown: a
// NodeRuntime made for the plan (its devices, a CAF system configured for them), the plan hosted
// on it (HostedPlan), and one Execution. RunPlan and LoadedPlan (job_runner.h) are built on it;
// callers that keep a runtime across jobs use NodeRuntime, HostedPlan and Execution directly.
//
// Create loads the plan: creates the devices, checks the plan, allocates one arena per device
// of exactly its planned bytes, creates one kernel per actor, and binds every slot. Run spawns
// and starts the actors and waits on the calling thread (Execution::Run's contract: OK when
// every actor finished; the failing actor's error; the stall watchdog's report). In every case
// every CAF thread and kernel thread has been joined when the Job is destroyed, and every actor
// has exited when Run returns.
//
// While Run runs, another thread may ask what every actor waits for (DescribeWaits: live
// diagnosis) or stop the job (Cancel). A traced job (JobOptions::trace) hands over its trace
// after Run (TakeTrace), also when the run failed.
//
// Threading: Create, Run and TakeTrace on one thread; on_step runs on that thread too.
// DescribeWaits and Cancel from any thread.
#ifndef SOFTWIRE_RUNTIME_HOST_JOB_H_
#define SOFTWIRE_RUNTIME_HOST_JOB_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "base/mutex.h"
#include "base/npy.h"
#include "base/status.h"
#include "data/data_root.h"
#include "proto/plan.pb.h"
#include "runtime/device/device.h"
#include "runtime/device/device_factory.h"
#include "runtime/device/sim/sim_clock.h"
#include "runtime/host/actor_binding.h"
#include "runtime/host/caf_options.h"
#include "runtime/host/checkpoint_recorder.h"
#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/job_monitor.h"
#include "runtime/host/job_trace.h"
#include "runtime/host/node_runtime.h"
#include "runtime/host/stall_report.h"
#include "runtime/host/step_collector.h"
#include "runtime/host/training_state.h"

namespace softwire {
namespace runtime {

struct JobOptions {
  CafOptions caf;
  DeviceOptions device;
  KernelRegistries kernels;
  // No firing completed, and none in flight, for this long -> fail with a stall report.
  // <= 0 disables.
  std::chrono::steady_clock::duration stall_timeout = std::chrono::seconds(60);
  // Called once per completed step, in step order, on the thread that calls Run.
  std::function<void(const CollectedStep&)> on_step;
  // Whether and what to trace.
  TraceOptions trace;
  // The timer of sim devices (plans with sim devices only).
  SimClockOptions sim;
  // Pin every kernel thread of the cpu devices, and the CAF workers, each to one core: device
  // after device, thread after thread, over the cores the process may use (wrapping around
  // when the devices have more threads than there are cores).
  bool pin_threads = false;
  // BLAS's own pool (NodeRuntimeOptions::blas_threads).
  int blas_threads = 0;
  // Where the plan's data paths resolve (data/data_root.h; HostedPlan::Load).
  data::DataRoot data_root;
  // Checkpoints taken while the job runs (ExecutionOptions::checkpoint).
  CheckpointOptions checkpoint;
  // A saved state to start from (training_state.h), written into the plan's memory by Create;
  // the run then continues from its step. Borrowed for Create only; null: start afresh.
  const TrainingState* resume = nullptr;
};

class Job {
 public:
  // `plan` is borrowed and must outlive the job.
  static StatusOr<std::unique_ptr<Job>> Create(const proto::Plan& plan, JobOptions options);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // Runs the plan once (Execution::Run). Call at most once.
  Status Run();

  const proto::Plan& plan() const { return plan_; }
  // By plan device index.
  const std::vector<Device*>& devices() const { return hosted_->devices(); }
  // The job's memory on each device, by plan device index.
  const std::vector<std::unique_ptr<DeviceArena>>& arenas() const { return hosted_->arenas(); }
  const RegisterSlots& register_slots() const { return hosted_->register_slots(); }
  // When Run started the actors.
  std::chrono::steady_clock::time_point started_at() const;
  // Firings completed by every actor together (after Run: the whole job's).
  int64_t completed_firings() const;

  // What every unfinished actor waits for (Execution::DescribeWaits). FailedPrecondition when
  // the job is not running: "... is not running yet" before Run started its actors, "... is not
  // running any more" once they stopped. Thread-safe.
  StatusOr<JobWaitStates> DescribeWaits(std::chrono::milliseconds timeout);
  // Stops a running job: Run returns Cancelled with `reason`. Thread-safe; no effect once the
  // job ended. A Cancel before Run makes Run fail at once.
  void Cancel(const std::string& reason);
  // After Run, for a traced job: everything recorded, with how the run ended. Empty for an
  // untraced job, or when already taken.
  std::optional<trace::TraceLog> TakeTrace();
  // How exactly sim launches kept their durations (zero without sim devices).
  SimClockStats sim_stats() const;
  // After Run: every variable's value (ReadHostedVariables, plan_variables.h).
  StatusOr<std::map<std::string, NpyArray>> ReadVariables() const;

 private:
  class StepEvents;
  Job(const proto::Plan& plan, JobOptions options);

  const proto::Plan& plan_;
  JobOptions options_;
  std::unique_ptr<StepEvents> events_;
  std::unique_ptr<NodeRuntime> runtime_;
  std::unique_ptr<HostedPlan> hosted_;
  // The run, once Run created it, for DescribeWaits and Cancel.
  mutable Mutex execution_mutex_;
  std::unique_ptr<Execution> execution_ GUARDED_BY(execution_mutex_);
  std::string cancelled_ GUARDED_BY(execution_mutex_);  // A Cancel before Run.
  SimClockStats sim_stats_;
  bool ran_ = false;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_JOB_H_
