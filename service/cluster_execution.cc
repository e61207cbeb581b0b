#include "service/cluster_execution.h"

#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <memory>

#include "base/file.h"
#include "plan/plan_partition.h"
#include "runtime/host/job_monitor.h"
#include "runtime/host/plan_variables.h"
#include "runtime/host/step_collector.h"
#include "runtime/host/step_results.h"
#include "trace/trace_files.h"

namespace softwire {
namespace service {
namespace {

// Where a job's checkpoints go in its results (as JobExecution puts them).
constexpr char kCheckpointFolder[] = "checkpoints";

std::string AckKey(const std::string& node, const std::string& command) {
  return node + "\n" + command;
}

// The code a node named in a report (StatusCodeName's spelling); Internal when unknown.
StatusCode CodeNamed(const std::string& name) {
  for (int code = 0; code <= static_cast<int>(StatusCode::kDataLoss); ++code) {
    if (name == StatusCodeName(static_cast<StatusCode>(code))) return static_cast<StatusCode>(code);
  }
  return StatusCode::kInternal;
}

proto::StepMetrics StepMetricsOf(const runtime::StepResult& step) {
  proto::StepMetrics metrics;
  metrics.set_step(step.step);
  metrics.set_loss(step.loss);
  for (const auto& [name, value] : step.outputs) (*metrics.mutable_metric())[name] = value;
  metrics.set_seconds(step.seconds);
  metrics.set_samples_per_second(step.samples_per_second);
  return metrics;
}

}  // namespace

// The whole plan's steps from the nodes' sink values: one StepCollector and StepTimer, as a
// run in one process has.
class ClusterExecution::Steps {
 public:
  // Steps are numbered from `first_step` on (a resumed run's), and the metrics start with
  // `metrics_before` (the lines of the steps before it).
  Steps(const proto::Plan& plan, JobExecutionListener* listener, int64_t first_step,
        std::string metrics_before)
      : plan_(plan),
        monitor_(0, &stopping_),
        collector_(plan, &monitor_, /*notify_steps=*/false),
        timer_(plan),
        listener_(listener),
        first_step_(first_step),
        metrics_(std::move(metrics_before)) {}

  void Start() {
    started_at_ = Clock::now();
    listener_->OnJobStarted();
  }
  // One value from a node's sink; reports completed steps. An error breaks the plan's rules
  // (a value of an unknown output, a piece reported too often).
  Status Add(const proto::SinkValue& value) {
    collector_.Report(value.output(), value.piece(), value.value());
    if (monitor_.failed()) return monitor_.failure();
    for (const runtime::CollectedStep& step : collector_.TakeCompletedSteps()) Report(step);
    return Status::Ok();
  }
  // Every node ended well: a plan without outputs completes all its steps now.
  void Finish() {
    if (collector_.has_outputs()) return;
    for (int64_t step = steps_; step < plan_.schedule().steps(); ++step) {
      runtime::CollectedStep collected;
      collected.step = step;
      collected.completed_at = Clock::now();
      Report(collected);
    }
  }
  bool complete() const { return steps_ >= plan_.schedule().steps(); }

  const std::string& metrics() const { return metrics_; }
  int64_t steps() const { return steps_; }
  const proto::StepMetrics& last() const { return last_; }
  double samples_per_step() const { return timer_.samples_per_step(); }
  Clock::time_point started_at() const { return started_at_; }

 private:
  void Report(const runtime::CollectedStep& step) {
    runtime::StepResult timed = timer_.Time(step, started_at_);
    timed.step += first_step_;
    metrics_ += runtime::MetricsJsonLine(timed) + "\n";
    last_ = StepMetricsOf(timed);
    ++steps_;
    listener_->OnJobStep(last_);
  }

  const proto::Plan& plan_;
  std::atomic<bool> stopping_{false};
  runtime::JobMonitor monitor_;
  runtime::StepCollector collector_;
  runtime::StepTimer timer_;
  JobExecutionListener* const listener_;
  const int64_t first_step_;
  Clock::time_point started_at_;
  std::string metrics_;
  int64_t steps_ = 0;
  proto::StepMetrics last_;
};

ClusterExecution::ClusterExecution(NodeRegistry* nodes, JobRunSpec spec,
                                   JobExecutionListener* listener, ClusterExecutionOptions options)
    : nodes_(nodes),
      spec_(std::move(spec)),
      listener_(listener),
      options_(options),
      run_id_(nodes->NewRunId()),
      plan_nodes_(plan::PlanNodes(spec_.plan)),
      variables_(PlanVariableBytes(spec_.plan)) {
  if (spec_.settings.checkpoint_every() > 0) {
    CheckpointGathererOptions gathered;
    gathered.directory = spec_.results_directory + "/" + kCheckpointFolder;
    gathered.job_name = spec_.plan.job_name();
    gathered.keep = spec_.settings.keep_checkpoints() > 0 ? spec_.settings.keep_checkpoints() : 3;
    gathered.on_saved = [listener](int64_t step, const std::string& folder) {
      listener->OnJobCheckpoint(
          step, std::string(kCheckpointFolder) + "/" + folder.substr(folder.find_last_of('/') + 1));
    };
    checkpoints_ = std::make_unique<CheckpointGatherer>(std::move(gathered));
  }
  nodes_->Subscribe(run_id_, this);
}

ClusterExecution::~ClusterExecution() {
  nodes_->Unsubscribe(run_id_);
}

JobOutcome ClusterExecution::Run() {
  JobOutcome outcome;
  const std::string job_name = spec_.plan.job_name();
  const int64_t first_step = spec_.resume ? spec_.resume->step : 0;
  Steps steps(spec_.plan, listener_, first_step, spec_.metrics_before);
  {
    MutexLock lock(&mutex_);
    for (const std::string& node : plan_nodes_) {
      if (!nodes_->IsLive(node)) failure_ = UnavailableError("node '" + node + "' is not joined");
    }
  }
  proto::NodeCommand host;
  host.mutable_host()->set_run_id(run_id_);
  host.mutable_host()->set_job_id(spec_.job_id);
  *host.mutable_host()->mutable_plan() = spec_.plan;
  host.mutable_host()->set_data_root(spec_.data_directory);
  host.mutable_host()->set_data_root_confined(true);
  host.mutable_host()->set_stall_timeout_seconds(spec_.settings.stall_timeout_seconds());
  host.mutable_host()->set_trace(spec_.settings.trace());
  host.mutable_host()->set_trace_first_step(spec_.settings.trace_first_step());
  host.mutable_host()->set_trace_end_step(spec_.settings.trace_end_step());
  host.mutable_host()->set_checkpoint_every(spec_.settings.checkpoint_every());
  host.mutable_host()->set_resume_step(first_step);
  bool started = false;
  Status status = CommandAll("host", host);
  if (status.ok() && spec_.resume) status = SendResumeState();
  if (status.ok()) {
    proto::NodeCommand attach;
    attach.mutable_attach()->set_run_id(run_id_);
    for (const std::string& node : plan_nodes_) {
      (*attach.mutable_attach()->mutable_peer_address())[node] = nodes_->DataPlaneAddress(node);
    }
    status = CommandAll("attach", attach);
  }
  if (status.ok() && checkpoints_ != nullptr) {
    MutexLock lock(&mutex_);
    checkpoints_->ExpectSenders(checkpoint_senders_);
  }
  if (status.ok()) {
    proto::NodeCommand start;
    start.mutable_start()->set_run_id(run_id_);
    steps.Start();
    started = true;
    status = CommandAll("start", start);
  }
  if (status.ok()) status = AwaitRunEnd(&steps);
  ReleaseAll(status.ok() ? "the job ended" : status.message());
  if (checkpoints_ != nullptr) {  // The checkpoints whole by now are written before Run returns.
    Status saved = checkpoints_->Finish();
    if (!saved.ok()) LOG(WARNING) << "job " << spec_.job_id << ": " << saved;
  }
  if (started) {
    outcome.seconds = std::chrono::duration<double>(Clock::now() - steps.started_at()).count();
  }
  outcome.steps = steps.steps();
  outcome.last_step = steps.last();
  outcome.samples_per_second =
      outcome.seconds > 0
          ? steps.samples_per_step() * static_cast<double>(outcome.steps) / outcome.seconds
          : 0;
  Status written = MakeDirectories(spec_.results_directory);
  if (written.ok()) {
    written = WriteFileAtomically(spec_.results_directory + "/metrics.jsonl", steps.metrics());
  }
  if (written.ok()) {
    written = WriteFileAtomically(spec_.results_directory + "/nodes.json", NodeClocksJson());
  }
  if (written.ok() && spec_.settings.trace()) written = WriteTrace();
  if (written.ok() && status.ok()) {  // The nodes' trained variables, stitched whole.
    StatusOr<std::map<std::string, NpyArray>> variables = InternalError("not gathered");
    {
      MutexLock lock(&mutex_);
      variables = variables_.Take();
    }
    written = variables.ok()
                  ? runtime::SaveVariables(spec_.results_directory + "/variables", *variables)
                  : variables.status();
  }
  {
    MutexLock lock(&mutex_);
    outcome.cancelled = cancelled_ && !status.ok();
    outcome.cancel_reason = cancel_reason_;
    if (!status.ok() && !outcome.cancelled && !lost_.empty()) outcome.lost_node = lost_.front();
  }
  if (!status.ok() && !started) {
    outcome.status =
        Status(status.code(), "cannot load job '" + job_name + "': " + status.message());
  } else if (!status.ok()) {
    outcome.status = Status(status.code(), "job '" + job_name + "' failed: " + status.message());
  } else if (!written.ok()) {
    outcome.status = Status(
        written.code(), "job '" + job_name + "' failed: writing the results: " + written.message());
  }
  return outcome;
}

Status ClusterExecution::CommandAll(const std::string& name, const proto::NodeCommand& command) {
  {
    MutexLock lock(&mutex_);
    SOFTWIRE_RETURN_IF_ERROR(FailureLocked());
  }
  for (const std::string& node : plan_nodes_) {
    proto::NodeCommand to_node = command;
    if (to_node.has_host()) to_node.mutable_host()->set_node(node);
    Status sent = nodes_->Send(node, std::move(to_node));
    if (!sent.ok()) {
      MutexLock lock(&mutex_);
      if (failure_.ok()) failure_ = sent;
      return failure_;
    }
  }
  const Clock::time_point deadline = Clock::now() + options_.command_timeout;
  MutexLock lock(&mutex_);
  for (;;) {
    SOFTWIRE_RETURN_IF_ERROR(FailureLocked());
    std::string missing;
    for (const std::string& node : plan_nodes_) {
      if (acks_[AckKey(node, name)] == 0) missing += (missing.empty() ? "'" : ", '") + node + "'";
    }
    if (missing.empty()) return Status::Ok();
    if (!changed_.WaitUntil(&lock, deadline) && Clock::now() >= deadline) {
      failure_ = DeadlineExceededError("node " + missing + " did not answer '" + name + "' in " +
                                       std::to_string(options_.command_timeout.count()) + " ms");
      return failure_;
    }
  }
}

Status ClusterExecution::SendResumeState() {
  const std::vector<proto::VariablePartChunk> chunks = ResumePartChunks(*spec_.resume, run_id_);
  for (const std::string& node : plan_nodes_) {
    for (const proto::VariablePartChunk& chunk : chunks) {
      proto::NodeCommand command;
      *command.mutable_resume_part() = chunk;
      Status sent = nodes_->Send(node, std::move(command));
      if (!sent.ok()) {
        MutexLock lock(&mutex_);
        if (failure_.ok()) failure_ = sent;
        return failure_;
      }
    }
  }
  MutexLock lock(&mutex_);
  return FailureLocked();
}

Status ClusterExecution::AwaitRunEnd(Steps* steps) {
  MutexLock lock(&mutex_);
  for (;;) {
    while (!values_.empty()) {
      proto::SinkValue value = std::move(values_.front());
      values_.pop_front();
      lock.Unlock();
      Status added = steps->Add(value);  // The listener is called without our lock.
      lock.Lock();
      if (!added.ok() && failure_.ok()) failure_ = added;
    }
    if (!failure_.ok() && failure_from_report_) PreferLostNodeLocked(&lock);
    SOFTWIRE_RETURN_IF_ERROR(FailureLocked());
    if (ended_.size() == plan_nodes_.size()) break;
    changed_.Wait(&lock);
  }
  lock.Unlock();
  steps->Finish();
  if (!steps->complete()) {
    return InternalError("every node ended, but the outputs of step " +
                         std::to_string(steps->steps()) + " never all arrived");
  }
  return Status::Ok();
}

void ClusterExecution::ReleaseAll(const std::string& reason) {
  std::vector<std::string> released;
  for (const std::string& node : plan_nodes_) {
    proto::NodeCommand release;
    release.mutable_release()->set_run_id(run_id_);
    release.mutable_release()->set_reason(reason);
    if (nodes_->Send(node, std::move(release)).ok()) released.push_back(node);
  }
  const Clock::time_point deadline = Clock::now() + options_.release_timeout;
  MutexLock lock(&mutex_);
  for (const std::string& node : released) {
    while (acks_[AckKey(node, "release")] == 0 &&
           std::find(lost_.begin(), lost_.end(), node) == lost_.end()) {
      if (!changed_.WaitUntil(&lock, deadline) && Clock::now() >= deadline) {
        LOG(WARNING) << "node '" << node << "' did not confirm it released run " << run_id_;
        break;
      }
    }
  }
}

std::string ClusterExecution::NodeClocksJson() const {
  std::string json = "{";
  for (const proto::NodeInfo& node : nodes_->Nodes()) {
    if (std::find(plan_nodes_.begin(), plan_nodes_.end(), node.node().name()) ==
        plan_nodes_.end()) {
      continue;
    }
    char entry[256];
    std::snprintf(entry, sizeof(entry),
                  "%s\"%s\": {\"clock_offset_seconds\": %.9f, \"clock_round_trip_seconds\": %.9f, "
                  "\"clock_probes\": %lld}",
                  json.size() > 1 ? ", " : "", node.node().name().c_str(),
                  node.clock_offset_seconds(), node.clock_round_trip_seconds(),
                  static_cast<long long>(node.clock_probes()));
    json += entry;
  }
  return json + "}\n";
}

Status ClusterExecution::WriteTrace() {
  const std::map<std::string, trace::NodeClockOffset> offsets = TraceClockOffsets(nodes_->Nodes());
  trace::StepWindow window;
  window.first = spec_.settings.trace_first_step();
  window.end = spec_.settings.trace_end_step() > 0 ? spec_.settings.trace_end_step() : -1;
  MutexLock lock(&mutex_);
  if (traces_.empty()) return Status::Ok();  // The run never started.
  for (const std::string& node : plan_nodes_) {
    if (!traces_.complete(node)) LOG(WARNING) << "node '" << node << "' sent no whole trace";
  }
  SOFTWIRE_ASSIGN_OR_RETURN(trace::TraceLog log, traces_.Merge(spec_.plan, window, offsets));
  lock.Unlock();
  StatusOr<std::string> summary =
      trace::WriteTraceFiles(spec_.results_directory + "/trace.json", log);
  if (!summary.ok()) return summary.status().WithContext("trace");
  return Status::Ok();
}

void ClusterExecution::PreferLostNodeLocked(MutexLock* lock) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(500);
  while (lost_.empty() && Clock::now() < deadline) changed_.WaitUntil(lock, deadline);
  failure_from_report_ = false;
  if (lost_.empty()) return;
  failure_ = AbortedError("node '" + lost_.front() + "' was lost: " + lost_reason_ + " (then " +
                          failure_.message() + ")");
}

Status ClusterExecution::FailureLocked() const {
  if (!failure_.ok()) return failure_;
  if (cancelled_) return CancelledError(cancel_reason_);
  return Status::Ok();
}

void ClusterExecution::OnReport(const std::string& node, const proto::NodeReport& report) {
  MutexLock lock(&mutex_);
  switch (report.report_case()) {
    case proto::NodeReport::kAck: {
      const proto::CommandAck& ack = report.ack();
      if (!ack.error().empty() && failure_.ok() && ack.command() != "release") {
        failure_ = Status(CodeNamed(ack.code()), "node '" + node + "': " + ack.error());
      }
      if (ack.command() == "attach" && ack.sends_checkpoints()) checkpoint_senders_.insert(node);
      ++acks_[AckKey(node, ack.command())];
      break;
    }
    case proto::NodeReport::kValues:
      for (const proto::SinkValue& value : report.values().value()) values_.push_back(value);
      break;
    case proto::NodeReport::kVariablePart: {
      if (report.variable_part().checkpoint_step() > 0) {  // A checkpoint: the run goes on.
        if (checkpoints_ == nullptr) return;
        const Status added = checkpoints_->Add(node, report.variable_part());
        if (!added.ok()) LOG(WARNING) << "job " << spec_.job_id << ": " << added;
        return;
      }
      const Status added = variables_.Add(node, report.variable_part());
      if (!added.ok() && failure_.ok()) failure_ = added;
      break;
    }
    case proto::NodeReport::kCheckpointSent: {
      if (checkpoints_ == nullptr) return;
      const Status sent = checkpoints_->ShareSent(node, report.checkpoint_sent());
      if (!sent.ok()) LOG(WARNING) << "job " << spec_.job_id << ": " << sent;
      return;
    }
    case proto::NodeReport::kTrace: {
      const Status added = traces_.Add(node, report.trace());
      if (!added.ok()) LOG(WARNING) << "job " << spec_.job_id << ": " << added;
      break;
    }
    case proto::NodeReport::kEnded: {
      const proto::RunEnded& ended = report.ended();
      ended_[node] = ended.error();
      if (!ended.error().empty() && failure_.ok()) {
        failure_ = Status(CodeNamed(ended.code()), "node '" + node + "': " + ended.error());
        failure_from_report_ = true;
      }
      break;
    }
    default:
      return;
  }
  changed_.NotifyAll();
}

void ClusterExecution::OnNodeLost(const std::string& node, const std::string& reason) {
  if (std::find(plan_nodes_.begin(), plan_nodes_.end(), node) == plan_nodes_.end()) return;
  MutexLock lock(&mutex_);
  if (lost_.empty()) lost_reason_ = reason;
  lost_.push_back(node);
  if (failure_.ok()) failure_ = AbortedError("node '" + node + "' was lost: " + reason);
  changed_.NotifyAll();
}

void ClusterExecution::Cancel(const std::string& reason) {
  MutexLock lock(&mutex_);
  if (cancelled_) return;
  cancelled_ = true;
  cancel_reason_ = reason;
  changed_.NotifyAll();
}

StatusOr<runtime::JobWaitStates> ClusterExecution::DescribeWaits(std::chrono::milliseconds) {
  return FailedPreconditionError("job '" + spec_.job_id +
                                 "' runs on node agents: live diagnosis of their actors is not "
                                 "served yet");
}

int64_t ClusterExecution::AllocatedBytes(const std::string& device) const {
  const std::string node = device.substr(0, device.find('/'));
  return nodes_->AllocatedBytes(node, device);
}

}  // namespace service
}  // namespace softwire
