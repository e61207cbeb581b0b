// Job: one run of one plan in this process, from loaded plan to clean shutdown.
//
// Create loads the plan: checks it (actors::DescribeActors), allocates one arena per device
// of exactly its planned bytes, creates one kernel per actor, and binds every slot. Run then
// starts a CAF actor system configured for the plan, spawns one HostActor per plan actor,
// starts them, and waits on the calling thread until one of:
//   - every actor finished: the system shuts down cleanly; OK;
//   - an actor failed (protocol violation, kernel error): every actor is stopped; the error
//     names the actor;
//   - no actor completed a firing for `stall_timeout` and none has one in flight: the watchdog
//     asks every unfinished actor what it waits for, stops them all, and fails with that
//     report.
// In every case every CAF thread and kernel thread has been joined when Run returns.
//
// While Run runs, another thread may ask what every actor waits for (DescribeWaits: live
// diagnosis) or stop the job (Cancel). A traced job (JobOptions::trace) hands over its trace
// after Run (TakeTrace), also when the run failed.
//
// Threading: Create, Run and TakeTrace on one thread; on_step runs on that thread too.
// DescribeWaits and Cancel from any thread.
#ifndef SOFTWIRE_RUNTIME_HOST_JOB_H_
#define SOFTWIRE_RUNTIME_HOST_JOB_H_

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "base/status.h"
#include "proto/plan.pb.h"
#include "runtime/device/device.h"
#include "runtime/device/device_factory.h"
#include "runtime/device/sim/sim_clock.h"
#include "runtime/host/actor_binding.h"
#include "runtime/host/actor_directory.h"
#include "runtime/host/caf_options.h"
#include "runtime/host/job_monitor.h"
#include "runtime/host/job_trace.h"
#include "runtime/host/stall_report.h"
#include "runtime/host/step_collector.h"

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
};

class Job {
 public:
  // `plan` is borrowed and must outlive the job.
  static StatusOr<std::unique_ptr<Job>> Create(const proto::Plan& plan, JobOptions options);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // Runs the plan once (see the file comment). Call at most once.
  Status Run();

  const proto::Plan& plan() const { return plan_; }
  const std::vector<std::unique_ptr<Device>>& devices() const { return devices_; }
  // The job's memory on each device, by plan device index.
  const std::vector<std::unique_ptr<DeviceArena>>& arenas() const { return arenas_; }
  const RegisterSlots& register_slots() const { return slots_; }
  // When Run started the actors.
  std::chrono::steady_clock::time_point started_at() const { return started_at_; }
  // Firings completed by every actor together (after Run: the whole job's).
  int64_t completed_firings() const;

  // What every unfinished actor waits for, asked of the actors themselves (each answers
  // between two of its messages, so a kernel that runs for long answers late), waiting at most
  // `timeout` for the answers; an actor that did not answer is listed as such. Thread-safe.
  // FailedPrecondition when the job is not running: "... is not running yet" before Run
  // started its actors, "... is not running any more" once they stopped.
  StatusOr<JobWaitStates> DescribeWaits(std::chrono::milliseconds timeout);
  // Stops a running job: Run returns Cancelled with `reason`. Thread-safe; no effect once the
  // job ended.
  void Cancel(const std::string& reason);
  // After Run, for a traced job: everything recorded, with how the run ended. Empty for an
  // untraced job, or when already taken.
  std::optional<trace::TraceLog> TakeTrace();
  // How exactly sim launches kept their durations (zero without sim devices).
  SimClockStats sim_stats() const;

 private:
  Job(const proto::Plan& plan, JobOptions options);

  Status WaitForEnd(caf::actor_system& system);
  // Hands the steps completed since the last call to options_.on_step, in order.
  void ReportSteps();
  Status DescribeStall(caf::actor_system& system, std::chrono::duration<double> idle);
  // Asks every unfinished actor what it waits for and waits up to `timeout` for the answers.
  JobWaitStates CollectWaitStates(caf::actor_system& system,
                                  std::chrono::steady_clock::duration timeout);
  void StopActors();
  bool AnyFiringInFlight() const;
  int CpuDevices() const;
  // Spawns the actor the sim clock wakes the scheduler with; null without sim devices.
  caf::actor StartWakingHost(caf::actor_system& system);

  const proto::Plan& plan_;
  JobOptions options_;
  std::vector<actors::ActorDescription> descriptions_;
  std::unique_ptr<JobMonitor> monitor_;
  std::unique_ptr<ActorDirectory> directory_;
  std::unique_ptr<StepCollector> collector_;
  // Times every sim device's queues. Declared before devices_, whose queues borrow it, and
  // after directory_ and monitor_, which it borrows. Null without sim devices.
  std::unique_ptr<SimClock> sim_clock_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<std::unique_ptr<DeviceArena>> arenas_;
  RegisterSlots slots_;
  std::vector<std::unique_ptr<ActorBinding>> bindings_;
  std::unique_ptr<JobTrace> trace_;  // Null when the job is not traced.
  std::chrono::steady_clock::time_point started_at_;
  int64_t reported_steps_ = 0;
  bool ran_ = false;
  Status run_status_;
  // The running system, for DescribeWaits; null before and after Run's actors live. Held by
  // DescribeWaits for its whole question, so Run's shutdown waits for it.
  std::mutex running_mutex_;
  caf::actor_system* running_system_ = nullptr;  // Guarded by running_mutex_.
  bool system_ended_ = false;                    // Guarded by running_mutex_.
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_JOB_H_
