#include "service/node_agent.h"

#include <glog/logging.h>

#include <chrono>
#include <deque>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "plan/labels.h"
#include "plan/plan_partition.h"
#include "runtime/host/execution.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/host/training_state.h"
#include "runtime/kernels/kernel.h"
#include "service/checkpoint_parts.h"
#include "service/node_traces.h"
#include "service/variable_parts.h"

namespace softwire {
namespace service {
namespace {

// How long hosting waits for devices that a released run still holds.
constexpr std::chrono::seconds kClaimPatience{10};

proto::NodeReport Ack(int64_t run_id, const std::string& command, const Status& status) {
  proto::NodeReport report;
  proto::CommandAck* ack = report.mutable_ack();
  ack->set_run_id(run_id);
  ack->set_command(command);
  if (!status.ok()) {
    ack->set_error(status.message());
    ack->set_code(StatusCodeName(status.code()));
  }
  return report;
}

int64_t RunIdOf(const proto::NodeCommand& command) {
  switch (command.command_case()) {
    case proto::NodeCommand::kHost:
      return command.host().run_id();
    case proto::NodeCommand::kAttach:
      return command.attach().run_id();
    case proto::NodeCommand::kStart:
      return command.start().run_id();
    case proto::NodeCommand::kRelease:
      return command.release().run_id();
    case proto::NodeCommand::kResumePart:
      return command.resume_part().run_id();
    default:
      return 0;
  }
}

}  // namespace

// One run of one share: its commands in order on a thread of its own (HostedPlan and Execution
// want Load, Bind, Create, Run and their destructors on one thread).
class NodeAgent::HostedRun final : public runtime::OutputReporter {
 public:
  HostedRun(const NodeAgentOptions& options, int64_t run_id)
      : options_(options), run_id_(run_id), thread_(&HostedRun::Work, this) {}
  ~HostedRun() override {
    Push(ReleaseCommand("the node agent stopped"));
    thread_.join();
  }

  void Push(proto::NodeCommand command) EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    if (command.has_release()) {
      releasing_ = true;
      if (execution_ != nullptr) execution_->Cancel(command.release().reason());
    }
    queue_.push_back(std::move(command));
    changed_.NotifyAll();
  }
  bool done() const EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    return done_;
  }
  void AddAllocatedBytes(proto::NodeHeartbeat* heartbeat) const EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    if (hosted_ == nullptr) return;
    const auto& arenas = hosted_->arenas();
    for (size_t i = 0; i < arenas.size(); ++i) {
      if (arenas[i] == nullptr) continue;
      const std::string device = plan::DeviceName(plan_.device(static_cast<int>(i)));
      (*heartbeat->mutable_allocated_bytes())[device] += arenas[i]->allocated_bytes();
    }
  }

  // OutputReporter: a sink's value goes to the server, which collects the whole plan's steps.
  void Report(const std::string& output, int64_t piece, double value) override {
    proto::NodeReport report;
    proto::SinkValues* values = report.mutable_values();
    values->set_run_id(run_id_);
    proto::SinkValue* sink = values->add_value();
    sink->set_output(output);
    sink->set_piece(piece);
    sink->set_value(value);
    options_.send(std::move(report));
  }

  static proto::NodeCommand ReleaseCommand(const std::string& reason) {
    proto::NodeCommand command;
    command.mutable_release()->set_reason(reason);
    return command;
  }

 private:
  void Work() EXCLUDES(mutex_) {
    for (;;) {
      proto::NodeCommand command;
      {
        MutexLock lock(&mutex_);
        while (queue_.empty()) changed_.Wait(&lock);
        command = std::move(queue_.front());
        queue_.pop_front();
      }
      if (command.has_release()) {
        Release();
        options_.send(Ack(run_id_, "release", Status::Ok()));
        MutexLock lock(&mutex_);
        done_ = true;
        return;
      }
      if (command.has_host()) {
        options_.send(Ack(run_id_, "host", Host(command.host())));
      } else if (command.has_resume_part()) {
        Status added = resume_.Add("the server", command.resume_part());
        if (!added.ok() && resume_error_.ok()) resume_error_ = added;
      } else if (command.has_attach()) {
        proto::NodeReport ack = Ack(run_id_, "attach", Attach(command.attach()));
        ack.mutable_ack()->set_sends_checkpoints(checkpoint_memory_.has_value() &&
                                                 SendsCheckpoints(*checkpoint_memory_));
        options_.send(std::move(ack));
      } else if (command.has_start()) {
        Start();
      }
    }
  }

  Status Host(const proto::HostShare& share) EXCLUDES(mutex_) {
    if (hosted_plan() != nullptr) return FailedPreconditionError("the run is hosted already");
    plan_ = share.plan();
    node_ = share.node();
    stall_timeout_seconds_ = share.stall_timeout_seconds();
    trace_ = share.trace();
    trace_steps_.first = share.trace_first_step();
    trace_steps_.end = share.trace_end_step() > 0 ? share.trace_end_step() : -1;
    checkpoint_every_ = share.checkpoint_every();
    resume_step_ = share.resume_step();
    data::DataRoot data_root(share.data_root());
    data_root.confined = share.data_root_confined();
    // A run released just before may still be freeing the devices (its actors stopping after
    // a peer died): wait for them a while rather than fail the next job.
    const auto give_up = std::chrono::steady_clock::now() + kClaimPatience;
    StatusOr<std::unique_ptr<runtime::HostedPlan>> hosted = runtime::HostedPlan::Load(
        options_.runtime, plan_, node_, static_cast<actors::JobId>(run_id_), data_root);
    while (!hosted.ok() && hosted.status().code() == StatusCode::kFailedPrecondition &&
           hosted.status().message().find("is in use by job") != std::string::npos &&
           std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      hosted = runtime::HostedPlan::Load(options_.runtime, plan_, node_,
                                         static_cast<actors::JobId>(run_id_), data_root);
    }
    if (!hosted.ok()) {
      return Status(hosted.status().code(),
                    "cannot host job '" + share.job_id() + "': " + hosted.status().message());
    }
    SOFTWIRE_RETURN_IF_ERROR((*hosted)->Bind({}));
    LOG(INFO) << "hosting " << share.job_id() << " (run " << run_id_
              << "): " << (*hosted)->actors().size() << " actors of node " << node_;
    MutexLock lock(&mutex_);
    hosted_ = std::move(*hosted);
    return Status::Ok();
  }

  Status Attach(const proto::AttachPeers& attach) EXCLUDES(mutex_) {
    runtime::HostedPlan* hosted = hosted_plan();
    if (hosted == nullptr) return FailedPreconditionError("the run is not hosted");
    SOFTWIRE_RETURN_IF_ERROR(RestoreResumeState(hosted));
    runtime::ExecutionOptions execution_options;
    const double stall = stall_timeout_seconds_ > 0 ? stall_timeout_seconds_ : 60;
    execution_options.stall_timeout =
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(stall));
    execution_options.trace.enabled = trace_;
    execution_options.trace.steps = trace_steps_;
    if (checkpoint_every_ > 0) {
      SOFTWIRE_ASSIGN_OR_RETURN(checkpoint_memory_, runtime::TrainingMemory::Locate(*hosted));
      execution_options.checkpoint.every = checkpoint_every_;
      execution_options.checkpoint.deliver = [this](runtime::TrainingState state) {
        return SendCheckpoint(state);
      };
    }
    SOFTWIRE_ASSIGN_OR_RETURN(
        std::unique_ptr<runtime::Execution> execution,
        runtime::Execution::Create(options_.runtime, hosted, std::move(execution_options)));
    // The values of this share's sinks go to the server rather than a collector of ours: only
    // the server sees every sink of the plan.
    hosted->SetOutputTarget(this);
    if (plan::PlanNodes(plan_).size() > 1) {
      if (options_.data_plane == nullptr) {
        return UnavailableError("node '" + node_ +
                                "' has no data plane; it can only run jobs of its own devices");
      }
      std::map<std::string, std::string> peers(attach.peer_address().begin(),
                                               attach.peer_address().end());
      SOFTWIRE_ASSIGN_OR_RETURN(attachment_,
                                options_.data_plane->Attach(hosted, execution.get(), peers));
    }
    MutexLock lock(&mutex_);
    execution_ = std::move(execution);
    if (releasing_) execution_->Cancel("released before it started");
    return Status::Ok();
  }

  // The state a restarted job resumes from (HostShare.resume_step), gathered from the
  // resume_part commands, written into the share's memory before it attaches.
  Status RestoreResumeState(runtime::HostedPlan* hosted) {
    if (resume_step_ <= 0) return Status::Ok();
    SOFTWIRE_RETURN_IF_ERROR(resume_error_.WithContext("the state to resume from"));
    SOFTWIRE_ASSIGN_OR_RETURN(runtime::TrainingState state, resume_.Take(resume_step_));
    Status restored = runtime::RestoreTrainingState(state, hosted);
    if (!restored.ok())
      return restored.WithContext("resuming from step " + std::to_string(resume_step_));
    LOG(INFO) << "run " << run_id_ << " resumes after step " << resume_step_;
    return Status::Ok();
  }

  // A checkpoint of the share (from the recorder's writer thread): its parts to the server.
  Status SendCheckpoint(const runtime::TrainingState& state) {
    StatusOr<std::vector<proto::NodeReport>> reports =
        CheckpointPartReports(*checkpoint_memory_, state, run_id_);
    if (!reports.ok()) {
      proto::NodeReport failed;
      failed.mutable_checkpoint_sent()->set_run_id(run_id_);
      failed.mutable_checkpoint_sent()->set_step(state.step);
      failed.mutable_checkpoint_sent()->set_error(reports.status().message());
      options_.send(std::move(failed));
      return reports.status();
    }
    for (proto::NodeReport& report : *reports) options_.send(std::move(report));
    return Status::Ok();
  }

  void Start() EXCLUDES(mutex_) {
    runtime::Execution* execution = nullptr;
    {
      MutexLock lock(&mutex_);
      execution = execution_.get();
    }
    if (execution == nullptr) {
      options_.send(Ack(run_id_, "start", FailedPreconditionError("the run is not attached")));
      return;
    }
    options_.send(Ack(run_id_, "start", Status::Ok()));
    Status status = execution->Run();
    // The trace goes first: the server writes the job's trace once every node ended.
    std::optional<trace::TraceLog> log = execution->TakeTrace();
    if (log) {
      for (proto::NodeReport& chunk : TraceChunkReports(run_id_, *log)) {
        options_.send(std::move(chunk));
      }
    }
    if (status.ok()) {  // The trained values of the share's variable parts, before RunEnded.
      StatusOr<std::vector<proto::NodeReport>> parts = VariablePartReports(*hosted_plan(), run_id_);
      if (parts.ok()) {
        for (proto::NodeReport& part : *parts) options_.send(std::move(part));
      } else {
        status = parts.status().WithContext("reading the trained variables");
      }
    }
    proto::NodeReport report;
    proto::RunEnded* ended = report.mutable_ended();
    ended->set_run_id(run_id_);
    ended->set_completed_firings(execution->completed_firings());
    if (!status.ok()) {
      ended->set_error(status.message());
      ended->set_code(StatusCodeName(status.code()));
    }
    LOG(INFO) << "run " << run_id_ << " ended: " << status;
    options_.send(std::move(report));
  }

  // Written only by the run's thread (Host, Release), so that thread may read it unlocked; the
  // lock orders it with the heartbeat's reads.
  runtime::HostedPlan* hosted_plan() EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    return hosted_.get();
  }

  // The attachment, then the execution (which borrows the hosted plan), then the hosted plan.
  void Release() EXCLUDES(mutex_) {
    std::unique_ptr<runtime::Execution> execution;
    std::unique_ptr<runtime::HostedPlan> hosted;
    {
      MutexLock lock(&mutex_);
      execution = std::move(execution_);
      hosted = std::move(hosted_);
    }
    attachment_.reset();
    execution.reset();
    hosted.reset();
    LOG(INFO) << "run " << run_id_ << " released";
  }

  const NodeAgentOptions& options_;
  const int64_t run_id_;
  // Only the run's thread touches these, except where guarded.
  proto::Plan plan_;
  std::string node_;
  double stall_timeout_seconds_ = 0;
  bool trace_ = false;
  trace::StepWindow trace_steps_;
  int64_t checkpoint_every_ = 0;
  int64_t resume_step_ = 0;
  GatheredState resume_;  // From resume_part commands.
  Status resume_error_;
  // The share's parts, described for its checkpoints (read by the recorder's writer thread
  // once set, before the execution exists).
  std::optional<runtime::TrainingMemory> checkpoint_memory_;
  std::unique_ptr<runtime::net::DataPlaneAttachment> attachment_;

  mutable Mutex mutex_;
  CondVar changed_;
  std::deque<proto::NodeCommand> queue_ GUARDED_BY(mutex_);
  std::unique_ptr<runtime::HostedPlan> hosted_ GUARDED_BY(mutex_);
  std::unique_ptr<runtime::Execution> execution_ GUARDED_BY(mutex_);
  bool releasing_ GUARDED_BY(mutex_) = false;
  bool done_ GUARDED_BY(mutex_) = false;
  std::thread thread_;  // Last: starts once everything above is constructed.
};

NodeAgent::NodeAgent(NodeAgentOptions options) : options_(std::move(options)) {}

NodeAgent::~NodeAgent() {
  AbortAll("the node agent stopped");
}

void NodeAgent::Handle(const proto::NodeCommand& command) {
  const int64_t run_id = RunIdOf(command);
  if (run_id == 0) return;
  MutexLock lock(&mutex_);
  ReapLocked();
  auto found = runs_.find(run_id);
  if (found == runs_.end() || found->second->done()) {
    if (command.has_host()) {
      runs_[run_id] = std::make_unique<HostedRun>(options_, run_id);
      runs_[run_id]->Push(command);
    } else if (command.has_release()) {
      options_.send(Ack(run_id, "release", Status::Ok()));  // Nothing hosted: nothing to free.
    } else if (command.has_resume_part()) {
      // Its hosting failed (and was answered) or the run was released: nothing to resume.
    } else {
      const std::string name = command.has_attach() ? "attach" : "start";
      options_.send(
          Ack(run_id, name, NotFoundError("this node hosts no run " + std::to_string(run_id))));
    }
    return;
  }
  found->second->Push(command);
}

void NodeAgent::AbortAll(const std::string& reason) {
  std::map<int64_t, std::unique_ptr<HostedRun>> runs;
  {
    MutexLock lock(&mutex_);
    runs.swap(runs_);
  }
  for (auto& [run_id, run] : runs) {
    proto::NodeCommand release = HostedRun::ReleaseCommand(reason);
    release.mutable_release()->set_run_id(run_id);
    run->Push(std::move(release));
  }
  runs.clear();  // Joins each run's thread once it freed everything.
}

proto::NodeHeartbeat NodeAgent::Heartbeat() const {
  proto::NodeHeartbeat heartbeat;
  MutexLock lock(&mutex_);
  for (const auto& [run_id, run] : runs_) {
    if (run->done()) continue;
    heartbeat.add_run_id(run_id);
    run->AddAllocatedBytes(&heartbeat);
  }
  return heartbeat;
}

void NodeAgent::ReapLocked() {
  for (auto it = runs_.begin(); it != runs_.end();) {
    if (it->second->done()) {
      it = runs_.erase(it);  // Its thread has returned: the join is immediate.
    } else {
      ++it;
    }
  }
}

}  // namespace service
}  // namespace softwire
