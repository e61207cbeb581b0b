#include "service/job_execution.h"

#include <cmath>
#include <optional>
#include <utility>

#include "base/file.h"
#include "plan/labels.h"
#include "runtime/host/job_events.h"
#include "runtime/host/plan_variables.h"
#include "trace/trace_files.h"

namespace softwire {
namespace service {
namespace {

using Clock = std::chrono::steady_clock;

proto::StepMetrics StepMetricsOf(const runtime::StepResult& step) {
  proto::StepMetrics metrics;
  metrics.set_step(step.step);
  metrics.set_loss(step.loss);
  for (const auto& [name, value] : step.outputs) (*metrics.mutable_metric())[name] = value;
  metrics.set_seconds(step.seconds);
  metrics.set_samples_per_second(step.samples_per_second);
  return metrics;
}

constexpr char kCheckpointFolder[] = "checkpoints";

runtime::ExecutionOptions ExecutionOptionsFor(const proto::RunSettings& settings,
                                              const std::string& results_directory,
                                              runtime::JobEvents* events,
                                              JobExecutionListener* listener) {
  runtime::ExecutionOptions options;
  options.events = events;
  if (settings.checkpoint_every() > 0) {
    options.checkpoint.every = settings.checkpoint_every();
    options.checkpoint.keep = settings.keep_checkpoints() > 0 ? settings.keep_checkpoints() : 3;
    options.checkpoint.directory = results_directory + "/" + kCheckpointFolder;
    options.checkpoint.on_saved = [listener](int64_t step, const std::string& folder) {
      const size_t name = folder.find_last_of('/');
      listener->OnJobCheckpoint(step, std::string(kCheckpointFolder) + "/" +
                                          folder.substr(name == std::string::npos ? 0 : name + 1));
    };
  }
  const double stall_seconds =
      settings.stall_timeout_seconds() > 0 ? settings.stall_timeout_seconds() : 60;
  options.stall_timeout =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(stall_seconds));
  if (settings.trace()) {
    options.trace.enabled = true;
    if (settings.trace_first_step() > 0 || settings.trace_end_step() > 0) {
      options.trace.steps.first = settings.trace_first_step();
      options.trace.steps.end = settings.trace_end_step() > 0 ? settings.trace_end_step() : -1;
    }
  }
  return options;
}

}  // namespace

// The run's JobEvents: steps timed as `softwire run` times them, kept for metrics.jsonl and
// handed to the listener.
class JobExecution::StepEvents final : public runtime::JobEvents {
 public:
  StepEvents(const proto::Plan& plan, JobExecutionListener* listener)
      : timer_(plan), listener_(listener) {}

  void OnStarted(Clock::time_point started_at) override {
    started_at_ = started_at;
    listener_->OnJobStarted();
  }
  void OnStep(const runtime::CollectedStep& step) override {
    const runtime::StepResult timed = timer_.Time(step, started_at_);
    metrics_ += runtime::MetricsJsonLine(timed) + "\n";
    last_ = StepMetricsOf(timed);
    ++steps_;
    listener_->OnJobStep(last_);
  }

  const std::string& metrics() const { return metrics_; }
  int64_t steps() const { return steps_; }
  const proto::StepMetrics& last() const { return last_; }
  double samples_per_step() const { return timer_.samples_per_step(); }
  Clock::time_point started_at() const { return started_at_; }

 private:
  runtime::StepTimer timer_;
  JobExecutionListener* const listener_;
  Clock::time_point started_at_;
  std::string metrics_;
  int64_t steps_ = 0;
  proto::StepMetrics last_;
};

JobExecution::JobExecution(runtime::NodeRuntime* runtime, JobRunSpec spec,
                           JobExecutionListener* listener)
    : runtime_(runtime), spec_(std::move(spec)), listener_(listener) {}

JobExecution::~JobExecution() {
  Release();
}

JobOutcome JobExecution::Run() {
  JobOutcome outcome;
  const std::string job_name = spec_.plan.job_name();
  StepEvents events(spec_.plan, listener_);
  runtime::Execution* execution = nullptr;
  {
    data::DataRoot data_root(spec_.data_directory);
    data_root.confined = true;
    StatusOr<std::unique_ptr<runtime::HostedPlan>> hosted =
        runtime_->Host(spec_.plan, "", data_root);
    if (!hosted.ok()) {
      outcome.status = Status(hosted.status().code(),
                              "cannot load job '" + job_name + "': " + hosted.status().message());
    } else {
      StatusOr<std::unique_ptr<runtime::Execution>> created = runtime::Execution::Create(
          runtime_, hosted->get(),
          ExecutionOptionsFor(spec_.settings, spec_.results_directory, &events, listener_));
      MutexLock lock(&mutex_);
      hosted_ = std::move(*hosted);
      if (!created.ok()) {
        outcome.status = created.status();
      } else {
        execution_ = std::move(*created);
        execution = execution_.get();
        if (cancelled_) execution->Cancel(cancel_reason_);
      }
    }
  }
  Status run_status = outcome.status;
  if (execution != nullptr) {
    run_status = execution->Run();
    outcome.seconds = std::chrono::duration<double>(Clock::now() - events.started_at()).count();
  }
  outcome.steps = events.steps();
  outcome.last_step = events.last();
  outcome.samples_per_second =
      outcome.seconds > 0
          ? events.samples_per_step() * static_cast<double>(outcome.steps) / outcome.seconds
          : 0;
  Status written = WriteResults(run_status, events.metrics(), execution);
  Release();
  {
    MutexLock lock(&mutex_);
    outcome.cancelled = cancelled_ && !run_status.ok();
    outcome.cancel_reason = cancel_reason_;
  }
  if (!run_status.ok() && execution == nullptr) {
    outcome.status = run_status;  // Never ran: "cannot load job ...".
  } else if (!run_status.ok()) {
    outcome.status =
        Status(run_status.code(), "job '" + job_name + "' failed: " + run_status.message());
  } else if (!written.ok()) {
    outcome.status = Status(
        written.code(), "job '" + job_name + "' failed: writing the results: " + written.message());
  }
  return outcome;
}

Status JobExecution::WriteResults(const Status& run_status, const std::string& metrics,
                                  runtime::Execution* execution) {
  const std::string& directory = spec_.results_directory;
  SOFTWIRE_RETURN_IF_ERROR(MakeDirectories(directory));
  SOFTWIRE_RETURN_IF_ERROR(WriteFileAtomically(directory + "/metrics.jsonl", metrics));
  if (execution != nullptr && spec_.settings.trace()) {
    std::optional<trace::TraceLog> log = execution->TakeTrace();
    if (log) {
      StatusOr<std::string> summary = trace::WriteTraceFiles(directory + "/trace.json", *log);
      if (!summary.ok()) return summary.status().WithContext("trace");
    }
  }
  if (!run_status.ok()) return Status::Ok();
  MutexLock lock(&mutex_);
  if (hosted_ == nullptr) return Status::Ok();
  SOFTWIRE_ASSIGN_OR_RETURN(auto variables, runtime::ReadHostedVariables(*hosted_));
  return runtime::SaveVariables(directory + "/variables", variables);
}

void JobExecution::Release() {
  std::unique_ptr<runtime::Execution> execution;
  std::unique_ptr<runtime::HostedPlan> hosted;
  {
    MutexLock lock(&mutex_);
    ended_ = true;
    execution = std::move(execution_);
    hosted = std::move(hosted_);
  }
  // The execution borrows the hosted plan: it goes first.
  execution.reset();
  hosted.reset();
}

void JobExecution::Cancel(const std::string& reason) {
  MutexLock lock(&mutex_);
  if (ended_ || cancelled_) return;
  cancelled_ = true;
  cancel_reason_ = reason;
  if (execution_ != nullptr) execution_->Cancel(reason);
}

StatusOr<runtime::JobWaitStates> JobExecution::DescribeWaits(std::chrono::milliseconds timeout) {
  MutexLock lock(&mutex_);
  if (execution_ == nullptr) {
    return FailedPreconditionError("job '" + spec_.job_id + "' is not running");
  }
  return execution_->DescribeWaits(timeout);
}

int64_t JobExecution::AllocatedBytes(const std::string& device) const {
  MutexLock lock(&mutex_);
  if (hosted_ == nullptr) return 0;
  for (int i = 0; i < spec_.plan.device_size(); ++i) {
    if (plan::DeviceName(spec_.plan.device(i)) != device) continue;
    const auto& arenas = hosted_->arenas();
    return static_cast<size_t>(i) < arenas.size() && arenas[static_cast<size_t>(i)] != nullptr
               ? arenas[static_cast<size_t>(i)]->allocated_bytes()
               : 0;
  }
  return 0;
}

}  // namespace service
}  // namespace softwire
