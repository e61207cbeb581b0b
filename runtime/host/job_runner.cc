#include "runtime/host/job_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include "plan/steps.h"
#include "runtime/host/job.h"
#include "runtime/host/plan_edits.h"
#include "runtime/kernels/cpu/cpu_kernels.h"

namespace softwire {
namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

// Turns the collector's steps into StepResults: wall time per step and throughput.
class StepRecorder {
 public:
  StepRecorder(const proto::Plan& plan, const RunOptions& options, RunResult* result)
      : options_(options),
        result_(result),
        samples_per_step_(
            static_cast<double>(std::max<int64_t>(1, plan.schedule().pieces_per_step()) *
                                plan.schedule().micro_batch_size())) {
    for (const proto::PlanOutput& output : plan.output()) {
      if (output.is_loss()) loss_name_ = output.name();
    }
  }

  void Record(const CollectedStep& step, Clock::time_point started_at) {
    StepResult recorded;
    recorded.step = step.step;
    recorded.outputs = step.outputs;
    auto loss = step.outputs.find(loss_name_);
    recorded.loss =
        loss != step.outputs.end() ? loss->second : std::numeric_limits<double>::quiet_NaN();
    Clock::time_point previous = result_->steps.empty() ? started_at : previous_;
    recorded.seconds =
        std::max(0.0, std::chrono::duration<double>(step.completed_at - previous).count());
    recorded.samples_per_second = recorded.seconds > 0 ? samples_per_step_ / recorded.seconds : 0.0;
    previous_ = std::max(previous, step.completed_at);
    result_->steps.push_back(recorded);
    if (options_.progress) options_.progress(recorded);
  }

 private:
  const RunOptions& options_;
  RunResult* result_;
  const double samples_per_step_;
  std::string loss_name_;
  Clock::time_point previous_;
};

StatusOr<std::unique_ptr<LoadedPlan>> LoadedPlan::Load(const proto::Plan& plan,
                                                       const RunOptions& options) {
  std::unique_ptr<LoadedPlan> loaded(new LoadedPlan(options));
  if (options.steps > 0 && options.steps != plan.schedule().steps()) {
    SOFTWIRE_ASSIGN_OR_RETURN(loaded->plan_, plan::LimitSteps(plan, options.steps));
  } else {
    loaded->plan_ = plan;
  }
  const KernelRegistry* cpu = options.cpu_kernels;
  if (cpu == nullptr) {
    RegisterCpuKernels(&loaded->cpu_kernels_);
    cpu = &loaded->cpu_kernels_;
  }
  loaded->recorder_ =
      std::make_unique<StepRecorder>(loaded->plan_, loaded->options_, &loaded->result_);
  JobOptions job_options;
  job_options.caf = options.caf;
  job_options.device.kernel_threads = options.kernel_threads;
  job_options.pin_threads = options.pin_threads;
  job_options.blas_threads = options.blas_threads;
  job_options.kernels.cpu = cpu;
  job_options.trace = options.trace;
  job_options.sim = options.sim;
  job_options.data_root = options.data_root;
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
  SOFTWIRE_ASSIGN_OR_RETURN(result_.variables, ReadVariables(plan_, job_->register_slots()));
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
