#include "runtime/host/job.h"

#include <algorithm>

#include "base/mutex.h"
#include "plan/labels.h"
#include "runtime/host/node_runtime_options.h"
#include "runtime/host/plan_variables.h"

namespace softwire {
namespace runtime {
namespace {

// Queues per device: one more than the highest index its actors name.
StatusOr<std::vector<int>> QueuesPerDevice(const proto::Plan& plan) {
  std::vector<int> queues(static_cast<size_t>(plan.device_size()), 1);
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.device() < 0 || actor.device() >= plan.device_size() || actor.queue() < 0) {
      return InvalidArgumentError(plan::ActorLabel(actor.name()) + ": device " +
                                  std::to_string(actor.device()) + " queue " +
                                  std::to_string(actor.queue()) + " does not exist");
    }
    int& count = queues[static_cast<size_t>(actor.device())];
    count = std::max(count, actor.queue() + 1);
  }
  return queues;
}

// A runtime made for one whole plan: its devices, with pinned threads when asked, and CAF
// settings for them (what a process that runs one plan and exits needs).
StatusOr<NodeRuntimeOptions> RuntimeOptionsForPlan(const proto::Plan& plan,
                                                   const JobOptions& options) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<int> queues, QueuesPerDevice(plan));
  std::vector<DeviceSpec> devices;
  for (int id = 0; id < plan.device_size(); ++id) {
    DeviceSpec spec;
    spec.device = plan.device(id);
    spec.queues = queues[static_cast<size_t>(id)];
    devices.push_back(std::move(spec));
  }
  HostingOptions hosting;
  hosting.caf = options.caf;
  hosting.device = options.device;
  hosting.kernels = options.kernels;
  hosting.sim = options.sim;
  hosting.pin_threads = options.pin_threads;
  hosting.blas_threads = options.blas_threads;
  for (const proto::ActorDef& actor : plan.actor()) {
    hosting.longest_sim_launch_seconds =
        std::max(hosting.longest_sim_launch_seconds, actor.estimated_seconds());
  }
  return NodeRuntimeOptionsFor(std::move(devices), hosting);
}

}  // namespace

// Hands the run's steps to JobOptions::on_step.
class Job::StepEvents final : public JobEvents {
 public:
  explicit StepEvents(std::function<void(const CollectedStep&)> on_step)
      : on_step_(std::move(on_step)) {}
  void OnStep(const CollectedStep& step) override { on_step_(step); }

 private:
  std::function<void(const CollectedStep&)> on_step_;
};

StatusOr<std::unique_ptr<Job>> Job::Create(const proto::Plan& plan, JobOptions options) {
  std::unique_ptr<Job> job(new Job(plan, std::move(options)));
  SOFTWIRE_ASSIGN_OR_RETURN(NodeRuntimeOptions runtime_options,
                            RuntimeOptionsForPlan(plan, job->options_));
  SOFTWIRE_ASSIGN_OR_RETURN(job->runtime_, NodeRuntime::Create(std::move(runtime_options)));
  SOFTWIRE_ASSIGN_OR_RETURN(job->hosted_, job->runtime_->Host(plan, "", job->options_.data_root));
  if (job->options_.resume != nullptr) {
    SOFTWIRE_RETURN_IF_ERROR(RestoreTrainingState(*job->options_.resume, job->hosted_.get()));
    job->options_.resume = nullptr;
  }
  return job;
}

Job::Job(const proto::Plan& plan, JobOptions options)
    : plan_(plan),
      options_(std::move(options)),
      events_(options_.on_step ? std::make_unique<StepEvents>(options_.on_step) : nullptr) {}

Job::~Job() {
  {
    MutexLock lock(&execution_mutex_);
    execution_.reset();
  }
  hosted_.reset();
  runtime_.reset();
}

Status Job::Run() {
  CHECK(!ran_) << "Job::Run called twice";
  ran_ = true;
  ExecutionOptions execution_options;
  execution_options.stall_timeout = options_.stall_timeout;
  execution_options.events = events_.get();
  execution_options.trace = options_.trace;
  execution_options.checkpoint = options_.checkpoint;
  SOFTWIRE_ASSIGN_OR_RETURN(
      std::unique_ptr<Execution> execution,
      Execution::Create(runtime_.get(), hosted_.get(), std::move(execution_options)));
  Execution* run = execution.get();
  {
    MutexLock lock(&execution_mutex_);
    execution_ = std::move(execution);
    if (!cancelled_.empty()) run->Cancel(cancelled_);
  }
  Status status = run->Run();
  sim_stats_ = runtime_->sim_stats();
  return status;
}

std::chrono::steady_clock::time_point Job::started_at() const {
  MutexLock lock(&execution_mutex_);
  return execution_ ? execution_->started_at() : std::chrono::steady_clock::time_point();
}

int64_t Job::completed_firings() const {
  MutexLock lock(&execution_mutex_);
  return execution_ ? execution_->completed_firings() : 0;
}

StatusOr<JobWaitStates> Job::DescribeWaits(std::chrono::milliseconds timeout) {
  MutexLock lock(&execution_mutex_);
  if (!execution_) {
    return FailedPreconditionError("job '" + plan_.job_name() + "' is not running yet");
  }
  return execution_->DescribeWaits(timeout);
}

void Job::Cancel(const std::string& reason) {
  MutexLock lock(&execution_mutex_);
  if (execution_) {
    execution_->Cancel(reason);
  } else {
    cancelled_ = reason.empty() ? "cancelled" : reason;
  }
}

std::optional<trace::TraceLog> Job::TakeTrace() {
  MutexLock lock(&execution_mutex_);
  return execution_ ? execution_->TakeTrace() : std::nullopt;
}

StatusOr<std::map<std::string, NpyArray>> Job::ReadVariables() const {
  return ReadHostedVariables(*hosted_);
}

SimClockStats Job::sim_stats() const {
  return sim_stats_;
}

}  // namespace runtime
}  // namespace softwire
