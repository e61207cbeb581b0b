#include "runtime/host/job_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "plan/steps.h"
#include "runtime/host/job.h"
#include "runtime/host/plan_variables.h"
#include "runtime/kernels/cpu/cpu_kernels.h"

namespace softwire {
namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

// Times the collector's steps (StepTimer) into the result and the progress listener.
class StepRecorder {
 public:
  // Steps are numbered from `first_step` on (a resumed run's).
  StepRecorder(const proto::Plan& plan, const RunOptions& options, int64_t first_step,
               RunResult* result)
      : options_(options), result_(result), timer_(plan), first_step_(first_step) {}

  void Record(const CollectedStep& step, Clock::time_point started_at) {
    result_->steps.push_back(timer_.Time(step, started_at));
    result_->steps.back().step += first_step_;
    if (options_.progress) options_.progress(result_->steps.back());
  }

 private:
  const RunOptions& options_;
  RunResult* result_;
  StepTimer timer_;
  const int64_t first_step_;
};

StatusOr<std::unique_ptr<LoadedPlan>> LoadedPlan::Load(const proto::Plan& plan,
                                                       const RunOptions& options) {
  std::unique_ptr<LoadedPlan> loaded(new LoadedPlan(options));
  const int64_t total_steps = options.steps > 0 ? options.steps : plan.schedule().steps();
  const int64_t first_step = options.resume != nullptr ? options.resume->step : 0;
  if (first_step >= total_steps) {
    return InvalidArgumentError("the saved state is at step " + std::to_string(first_step) +
                                " and job '" + plan.job_name() + "' runs " +
                                std::to_string(total_steps) + " steps: no step is left to run");
  }
  const int64_t run_steps = total_steps - first_step;
  if (run_steps != plan.schedule().steps()) {
    SOFTWIRE_ASSIGN_OR_RETURN(loaded->plan_, plan::LimitSteps(plan, run_steps));
  } else {
    loaded->plan_ = plan;
  }
  const KernelRegistry* cpu = options.cpu_kernels;
  if (cpu == nullptr) {
    RegisterCpuKernels(&loaded->cpu_kernels_);
    cpu = &loaded->cpu_kernels_;
  }
  loaded->recorder_ =
      std::make_unique<StepRecorder>(loaded->plan_, loaded->options_, first_step, &loaded->result_);
  JobOptions job_options;
  job_options.caf = options.caf;
  job_options.device.kernel_threads = options.kernel_threads;
  job_options.device.cuda_allow_tf32 = options.cuda_allow_tf32;
  job_options.device.cuda_stream_ordered_edges = options.cuda_stream_ordered_edges;
  job_options.pin_threads = options.pin_threads;
  job_options.blas_threads = options.blas_threads;
  job_options.kernels.cpu = cpu;
  job_options.trace = options.trace;
  job_options.sim = options.sim;
  job_options.data_root = options.data_root;
  job_options.checkpoint = options.checkpoint;
  job_options.resume = options.resume;
  job_options.stall_timeout =
      options.stall_timeout_seconds > 0
          ? std::chrono::duration_cast<Clock::duration>(
                std::chrono::duration<double>(options.stall_timeout_seconds))
          : Clock::duration::zero();
  LoadedPlan* self = loaded.get();
  job_options.on_step = [self](const CollectedStep& step) {
    self->recorder_->Record(step, self->job_->started_at());
  };
  SOFTWIRE_ASSIGN_OR_RETURN(loaded->job_, Job::Create(loaded->plan_, std::move(job_options)));
  return loaded;
}

LoadedPlan::LoadedPlan(const RunOptions& options) : options_(options) {}

LoadedPlan::~LoadedPlan() = default;

StatusOr<RunResult> LoadedPlan::Run() {
  CHECK(!ran_) << "LoadedPlan::Run called twice";
  ran_ = true;
  SOFTWIRE_RETURN_IF_ERROR(job_->Run());
  result_.seconds = std::chrono::duration<double>(Clock::now() - job_->started_at()).count();
  result_.firings = job_->completed_firings();
  for (int i = 0; i < plan_.device_size(); ++i) {
    DeviceMemory memory;
    memory.device = job_->devices()[i]->name();
    memory.planned_bytes = plan_.device(i).planned_bytes();
    memory.allocated_bytes = job_->arenas()[i]->allocated_bytes();
    result_.memory.push_back(memory);
  }
  if (options_.read_variables) {
    SOFTWIRE_ASSIGN_OR_RETURN(result_.variables, job_->ReadVariables());
  }
  result_.sim_timing = job_->sim_stats();
  return std::move(result_);
}

const proto::Plan& LoadedPlan::plan() const {
  return plan_;
}

StatusOr<JobWaitStates> LoadedPlan::DescribeWaits(std::chrono::milliseconds timeout) {
  return job_->DescribeWaits(timeout);
}

void LoadedPlan::Cancel(const std::string& reason) {
  job_->Cancel(reason);
}

std::optional<trace::TraceLog> LoadedPlan::TakeTrace() {
  return job_->TakeTrace();
}

StatusOr<RunResult> RunPlan(const proto::Plan& plan, const RunOptions& options) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<LoadedPlan> loaded, LoadedPlan::Load(plan, options));
  StatusOr<RunResult> result = loaded->Run();
  if (result.ok()) result->trace = loaded->TakeTrace();
  return result;
}

}  // namespace runtime
}  // namespace softwire
