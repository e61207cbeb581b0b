#include "runtime/host/job.h"

#include <algorithm>
#include <thread>

#include "base/mutex.h"
#include "base/thread_affinity.h"
#include "plan/labels.h"

namespace softwire {
namespace runtime {
namespace {

// Cores for a device of `threads` kernel threads whose first thread takes allowed[first]: the
// next `threads` allowed cores, wrapping around when the process has fewer.
std::vector<int> DeviceCores(const std::vector<int>& allowed, size_t first, int threads) {
  std::vector<int> cores;
  for (int thread = 0; thread < threads; ++thread) {
    cores.push_back(allowed[(first + static_cast<size_t>(thread)) % allowed.size()]);
  }
  return cores;
}

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
  NodeRuntimeOptions runtime;
  runtime.kernels = options.kernels;
  runtime.sim = options.sim;
  runtime.caf = options.caf;
  runtime.blas_threads = options.blas_threads;
  SOFTWIRE_ASSIGN_OR_RETURN(std::vector<int> queues, QueuesPerDevice(plan));
  const std::vector<int> allowed_cores = AllowedCores();
  size_t next_core = 0;  // With pinned threads: the first core of the next cpu device.
  int cpu_devices = 0;
  const proto::PlanDevice* cpu_device = nullptr;  // The last cpu device.
  bool sim_devices = false;
  for (int id = 0; id < plan.device_size(); ++id) {
    const proto::PlanDevice& plan_device = plan.device(id);
    DeviceSpec spec;
    spec.device = plan_device;
    spec.queues = queues[static_cast<size_t>(id)];
    spec.options = options.device;
    if (plan_device.kind() == proto::DEVICE_KIND_CPU) {
      ++cpu_devices;
      cpu_device = &plan_device;
      if (options.pin_threads && !allowed_cores.empty()) {
        spec.options.cores =
            DeviceCores(allowed_cores, next_core, KernelThreads(plan_device, spec.options));
        next_core += spec.options.cores.size();
        // The worker holding the device's strand is its thread 0: it runs on the same core.
        if (options.caf.worker_cores.empty())
          runtime.caf.worker_cores.push_back(spec.options.cores[0]);
      }
    }
    sim_devices = sim_devices || plan_device.kind() == proto::DEVICE_KIND_SIM;
    runtime.devices.push_back(std::move(spec));
  }
  // One cpu device and one worker: that worker is always the device's thread 0.
  if (cpu_devices == 1 && CafThreads(runtime.caf, 1) == 1 && runtime.caf.worker_names.empty()) {
    runtime.caf.worker_names.push_back(plan::DeviceThreadName(*cpu_device, 0));
  }
  // The long spin only pays while the workers leave a core to the sim timer thread: with more
  // workers, those woken for the spinner's overflow take the timer's core (six workers on two
  // cores stretched 10 ms launches to 11 ms).
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (runtime.caf.worker_spin_us < 0 && sim_devices && cpu_devices == 0 &&
      runtime.caf.policy == "sharing" && CafThreads(runtime.caf, 0) < cores) {
    double longest = 0;
    for (const proto::ActorDef& actor : plan.actor()) {
      longest = std::max(longest, actor.estimated_seconds());
    }
    runtime.caf.worker_spin_us = SimOnlyWorkerSpinUs(longest);
  }
  return runtime;
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

SimClockStats Job::sim_stats() const {
  return sim_stats_;
}

}  // namespace runtime
}  // namespace softwire
