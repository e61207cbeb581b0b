// RunPlan: run a compiled plan in this process and collect what it produced.
//
//   RunOptions options;
//   options.progress = [](const StepResult& step) {
//     std::printf("step %lld loss %.4f\n", (long long)step.step, step.loss);
//   };
//   StatusOr<RunResult> result = RunPlan(plan, options);
//   if (!result.ok()) { std::cerr << result.status() << "\n"; return 1; }
//   WriteNpy(..., result->variables.at("fc1.weight") ...);
//
// Failure: InvalidArgument for a plan this runtime cannot load (naming the actor, register or
// device), Unimplemented for device kinds this build cannot host, and for a run that went
// wrong the Status of the failing actor (protocol or kernel error) or the stall watchdog's
// report. Every thread the run started has been joined when RunPlan returns.
// Threading: RunPlan blocks its caller, which also runs the progress listener.
#ifndef SOFTWIRE_RUNTIME_HOST_JOB_RUNNER_H_
#define SOFTWIRE_RUNTIME_HOST_JOB_RUNNER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/npy.h"
#include "base/status.h"
#include "data/data_root.h"
#include "proto/plan.pb.h"
#include "runtime/device/sim/sim_clock.h"
#include "runtime/host/caf_options.h"
#include "runtime/host/checkpoint_recorder.h"
#include "runtime/host/job_trace.h"
#include "runtime/host/stall_report.h"
#include "runtime/host/step_results.h"
#include "runtime/kernels/kernel.h"
#include "trace/trace_model.h"

namespace softwire {
namespace runtime {

struct RunOptions {
  // Steps to run; <= 0: the plan's. May not exceed the plan's.
  int64_t steps = 0;
  // Called once per completed step, in order, on the caller's thread. May be empty.
  std::function<void(const StepResult&)> progress;
  // Fail with a report of what every unfinished actor waits for when no actor completed a
  // firing, and none had one running or queued, for this long (a stalled plan, not a slow
  // kernel). <= 0 disables the watchdog.
  double stall_timeout_seconds = 60;
  // CAF scheduler settings (caf_options.h explains the defaults).
  CafOptions caf;
  // Kernel threads per cpu device; <= 0: the plan's PlanDevice.cores.
  int kernel_threads = 0;
  // cuda devices: float32 products on TF32 tensor cores (DeviceOptions::cuda_allow_tf32).
  bool cuda_allow_tf32 = false;
  // cuda devices: stream-ordered edges (DeviceOptions::cuda_stream_ordered_edges).
  bool cuda_stream_ordered_edges = true;
  // Threads of BLAS's own pool (process-wide). 0: none, every BLAS call runs on the device
  // thread that makes it and products are spread over the device's kernel threads in bands
  // (docs/RUNTIME.md, "Threads"); > 0: OpenBLAS's pool with that many threads, for
  // comparisons; < 0: leave BLAS as it is.
  int blas_threads = 0;
  // Pin each kernel thread and CAF worker to one core (JobOptions::pin_threads).
  bool pin_threads = false;
  // Kernels of cpu devices. Null: every cpu kernel (RegisterCpuKernels). Tests inject their
  // own. Borrowed; must outlive the call.
  const KernelRegistry* cpu_kernels = nullptr;
  // Record an actor trace (docs/TRACING.md). Off: one predictable branch per hook.
  TraceOptions trace;
  // The timer of sim devices (sim_clock.h), for plans that have them.
  SimClockOptions sim;
  // The hosting node's data root: where the plan's data files (npy and text datasets, npy
  // initializers), which a plan names relative to its job file's directory, are found
  // (data/data_root.h). The CLI's `run` passes the job file's directory. Empty: a plan with a
  // relative data path fails to load, naming the source or variable. `confined` refuses
  // absolute paths and '..' escapes (a node serving others).
  data::DataRoot data_root;
  // Checkpoints taken while the run goes on (checkpoint_recorder.h): every `every` steps, in
  // `directory`, the latest `keep` kept. every == 0: none.
  CheckpointOptions checkpoint;
  // Resume: the state to start from (a checkpoint, checkpoint_files.h). The run then runs the
  // steps after resume->step (`steps`, or the plan's, counts them all: it must exceed
  // resume->step), reports them numbered from resume->step on, and reads the batches that an
  // unbroken run would have read. Borrowed for Load; null: start afresh.
  const TrainingState* resume = nullptr;
  // Read every variable's final value out of the arena into RunResult::variables when the run
  // ends (a copy the size of the weights, held while the arena still is). Off: the map stays
  // empty (the CLI's `run` without `--save`).
  bool read_variables = true;
};

// Memory of one device.
struct DeviceMemory {
  std::string device;  // "node0/cpu:0".
  int64_t planned_bytes = 0;
  int64_t allocated_bytes = 0;
};

struct RunResult {
  std::vector<StepResult> steps;
  // Final value of every PlanVariable, its parts stitched together, by name. Variables with a
  // part on a sim device are missing: sim devices compute no values. Empty unless
  // RunOptions::read_variables.
  std::map<std::string, NpyArray> variables;
  std::vector<DeviceMemory> memory;  // Plan device order; sim devices allocate 0 bytes.
  double seconds = 0;                // Wall time from the actors' start to the end.
  int64_t firings = 0;               // Kernel firings of all actors together.
  // The raw trace when RunOptions::trace.enabled (trace::BuildTraceModel analyses it).
  std::optional<trace::TraceLog> trace;
  // Plans with sim devices: how late their launches completed against their estimates.
  SimClockStats sim_timing;
};

// Loads `plan` and runs it once: LoadedPlan::Load, then Run.
StatusOr<RunResult> RunPlan(const proto::Plan& plan, const RunOptions& options);

class Job;
class StepRecorder;

// RunPlan in two steps, for callers that tell a plan that cannot be loaded (a dataset that does
// not match, an op without a kernel, memory the host refuses: usually bad input) from a run
// that failed. Load does everything but start the actors: it checks the plan, allocates the
// arenas, starts the kernel threads and creates the kernels.
class LoadedPlan {
 public:
  static StatusOr<std::unique_ptr<LoadedPlan>> Load(const proto::Plan& plan,
                                                    const RunOptions& options);
  ~LoadedPlan();
  LoadedPlan(const LoadedPlan&) = delete;
  LoadedPlan& operator=(const LoadedPlan&) = delete;

  // Runs the plan to its end. Call at most once.
  StatusOr<RunResult> Run();

  // While Run runs, from any thread: what every unfinished actor waits for (Job::DescribeWaits),
  // and a way to stop the run (Run then returns Cancelled with `reason`).
  StatusOr<JobWaitStates> DescribeWaits(std::chrono::milliseconds timeout);
  void Cancel(const std::string& reason);
  // After Run (also a failed one), for a traced run: its trace. Run leaves it here; RunPlan
  // moves it into RunResult::trace.
  std::optional<trace::TraceLog> TakeTrace();

  // The plan as it runs (after the steps override).
  const proto::Plan& plan() const;

 private:
  explicit LoadedPlan(const RunOptions& options);

  RunOptions options_;
  proto::Plan plan_;
  KernelRegistry cpu_kernels_;
  RunResult result_;
  std::unique_ptr<StepRecorder> recorder_;
  std::unique_ptr<Job> job_;
  bool ran_ = false;
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_JOB_RUNNER_H_
