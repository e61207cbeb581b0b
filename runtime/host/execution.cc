#include "runtime/host/execution.h"

#include <algorithm>
#include <caf/all.hpp>
#include <cstdio>
#include <map>

#include "plan/labels.h"
#include "runtime/host/host_actor.h"
#include "runtime/host/host_messages.h"

namespace softwire {
namespace runtime {
namespace {

using Clock = std::chrono::steady_clock;

// How long the stall watchdog waits for unfinished actors to say what they wait for. An actor
// that does not answer in time is busy in a kernel or has its worker blocked; the report
// says so instead of waiting longer.
constexpr auto kWaitReportTimeout = std::chrono::seconds(1);
// Stall reports list at most this many actors.
constexpr int kMaxReportedActors = 40;

// Where the actor collecting one question's wait reports leaves them.
struct WaitReportInbox {
  Mutex mutex;
  CondVar arrived;
  std::map<int64_t, WaitReport> reports GUARDED_BY(mutex);
};

// The actor the answers to one question go to. (A class rather than a spawned lambda: CAF
// 0.17's function-based actors without arguments dereference a null pointer to an empty
// tuple, which UBSan stops.)
class WaitReportCollector final : public caf::event_based_actor {
 public:
  WaitReportCollector(caf::actor_config& config, std::shared_ptr<WaitReportInbox> inbox)
      : caf::event_based_actor(config), inbox_(std::move(inbox)) {}

  caf::behavior make_behavior() override {
    return {[this](WaitReport& report) {
      MutexLock lock(&inbox_->mutex);
      inbox_->reports[report.actor] = std::move(report);
      inbox_->arrived.NotifyAll();
    }};
  }

 private:
  std::shared_ptr<WaitReportInbox> inbox_;
};

}  // namespace

// Counts the run's actors that exited (CAF calls an attached functor when an actor terminated).
struct Execution::ExitLatch {
  Mutex mutex;
  CondVar changed;
  int64_t exited GUARDED_BY(mutex) = 0;
};

StatusOr<std::unique_ptr<Execution>> Execution::Create(NodeRuntime* runtime, HostedPlan* hosted,
                                                       ExecutionOptions options) {
  if (hosted->broken()) {
    return FailedPreconditionError("job " + std::to_string(hosted->job()) + " ('" +
                                   hosted->plan().job_name() +
                                   "') failed in an earlier run; load it again");
  }
  std::unique_ptr<Execution> run(new Execution(runtime, hosted, std::move(options)));
  const proto::Plan& plan = hosted->plan();
  if (run->options_.trace.enabled) {
    std::vector<actors::ActorDescription> descriptions;
    SOFTWIRE_ASSIGN_OR_RETURN(descriptions, actors::DescribeActors(plan));
    SOFTWIRE_ASSIGN_OR_RETURN(run->trace_,
                              JobTrace::Create(plan, descriptions, run->options_.trace));
  }
  if (run->options_.checkpoint.every > 0) {
    SOFTWIRE_ASSIGN_OR_RETURN(run->checkpoints_,
                              CheckpointRecorder::Create(*hosted, run->options_.checkpoint));
  }
  // A checkpointed update copies its part at its completion, before it releases the variable:
  // it keeps completion order.
  const CheckpointRecorder* checkpoints = run->checkpoints_.get();
  SOFTWIRE_RETURN_IF_ERROR(hosted->MarkStreamOrderedEdges(
      [checkpoints](int64_t id) { return checkpoints != nullptr && checkpoints->Watches(id); }));
  hosted->stopping()->store(false);
  hosted->directory()->ResetCompletions();
  hosted->SetOutputTarget(run->collector_.get());
  for (int64_t id : hosted->actors()) {
    ActorBinding* binding = hosted->bindings()[static_cast<size_t>(id)].get();
    binding->StartRun(hosted->pieces_before());
    ActorTracer* tracer = run->trace_ ? run->trace_->tracer(id) : nullptr;
    CheckpointRecorder* checkpoints =
        run->checkpoints_ && run->checkpoints_->Watches(id) ? run->checkpoints_.get() : nullptr;
    caf::actor actor = runtime->system().spawn<HostActor>(binding, run->router_.get(),
                                                          run->monitor_.get(), tracer, checkpoints);
    std::shared_ptr<ExitLatch> exits = run->exits_;
    actor->attach_functor([exits] {
      MutexLock lock(&exits->mutex);
      ++exits->exited;
      exits->changed.NotifyAll();
    });
    hosted->directory()->Set(id, std::move(actor));
  }
  // Peers may send as soon as their own run started, which may be before ours: an actor that
  // gets a message before its start message starts then.
  run->router_->Open();
  return run;
}

Execution::Execution(NodeRuntime* runtime, HostedPlan* hosted, ExecutionOptions options)
    : runtime_(runtime),
      hosted_(hosted),
      options_(std::move(options)),
      monitor_(std::make_unique<JobMonitor>(static_cast<int64_t>(hosted->actors().size()),
                                            hosted->stopping())),
      collector_(std::make_unique<StepCollector>(hosted->plan(), monitor_.get(),
                                                 /*notify_steps=*/options_.events != nullptr)),
      router_(std::make_unique<PeerRouter>(hosted->job(), hosted->directory())),
      exits_(std::make_shared<ExitLatch>()) {}

Execution::~Execution() {
  if (!ran_) {  // Spawned but never started: stop the actors before their bindings are reused.
    router_->Close();
    StopActors();
    AwaitActorsExited();
    CancelLaunches();
    AwaitDeferredLaunches();
    hosted_->directory()->Clear();
  }
  caf::logger::set_current_actor_system(nullptr);  // See DescribeWaits.
}

bool Execution::AnyFiringInFlight() const {
  for (int64_t id : hosted_->actors()) {
    if (hosted_->bindings()[static_cast<size_t>(id)]->firings_in_flight.load(
            std::memory_order_relaxed) > 0) {
      return true;
    }
  }
  return false;
}

int64_t Execution::completed_firings() const {
  int64_t total = 0;
  for (int64_t id : hosted_->actors()) {
    total += hosted_->bindings()[static_cast<size_t>(id)]->completed_firings.load();
  }
  return total;
}

void Execution::AwaitActorsExited() {
  const int64_t actors = static_cast<int64_t>(hosted_->actors().size());
  MutexLock lock(&exits_->mutex);
  while (exits_->exited < actors) exits_->changed.Wait(&lock);
}

void Execution::CancelLaunches() {
  hosted_->stopping()->store(true);
  for (Device* device : hosted_->devices()) {
    if (device != nullptr) device->CancelLaunches(hosted_->stopping());
  }
}

void Execution::AwaitDeferredLaunches() {
  // Each actor counted its deferred launches before it exited (the exit hook orders that count
  // before AwaitActorsExited returned). A failed run's queues cancel them quickly (the stop flag
  // is up); a sim queue reports each at its deadline.
  for (int64_t id : hosted_->actors()) {
    const ActorBinding& binding = *hosted_->bindings()[static_cast<size_t>(id)];
    hosted_->directory()->AwaitCompletions(
        id, binding.deferred_launches.load(std::memory_order_acquire));
  }
}

Status Execution::Run() {
  CHECK(!ran_) << "Execution::Run called twice";
  ran_ = true;
  ActorDirectory* directory = hosted_->directory();
  if (trace_) trace_->Started();
  started_at_ = Clock::now();
  if (options_.events != nullptr) options_.events->OnStarted(started_at_);
  {
    MutexLock lock(&running_mutex_);
    running_ = true;
  }
  for (int64_t id : hosted_->actors()) caf::anon_send(directory->Get(id), start_atom_v);
  Status status = WaitForEnd();
  if (!status.ok()) StopActors();
  AwaitActorsExited();
  if (!status.ok()) CancelLaunches();
  AwaitDeferredLaunches();
  {
    MutexLock lock(&running_mutex_);  // Waits for a DescribeWaits.
    running_ = false;
    ended_ = true;
  }
  router_->Close();
  directory->Clear();  // Late messages and completions of this run are dropped from now on.
  if (checkpoints_) {  // Every actor exited: the saves still pending are the last ones.
    Status saved = checkpoints_->Finish();
    if (status.ok() && !saved.ok()) status = saved;
  }
  hosted_->RunEnded(status.ok());
  caf::logger::set_current_actor_system(nullptr);  // See DescribeWaits.
  run_status_ = status;
  return status;
}

StatusOr<JobWaitStates> Execution::DescribeWaits(std::chrono::milliseconds timeout) {
  MutexLock lock(&running_mutex_);
  if (!running_ || monitor_->all_finished() || monitor_->failed()) {
    const bool ended = ended_ || monitor_->all_finished() || monitor_->failed();
    return FailedPreconditionError("job '" + hosted_->plan().job_name() + "' is not running" +
                                   (ended ? " any more" : " yet"));
  }
  JobWaitStates states = CollectWaitStates(timeout);
  // Spawning and sending from a thread CAF does not own makes CAF 0.17 keep a reference to the
  // system's logger in that thread's thread-local storage, and the actor_system destructor
  // waits until the logger is destroyed: it would wait forever. Drop the reference.
  caf::logger::set_current_actor_system(nullptr);
  return states;
}

void Execution::Cancel(const std::string& reason) {
  monitor_->Fail(CancelledError(reason));
}

std::optional<trace::TraceLog> Execution::TakeTrace() {
  if (!trace_ || !ran_) return std::nullopt;
  std::optional<trace::TraceLog> log =
      trace_->TakeLog(run_status_.ok() ? "ok" : run_status_.ToString());
  trace_.reset();
  return log;
}

Status Execution::WaitForEnd() {
  const Clock::duration stall_timeout = options_.stall_timeout;
  const proto::Plan& plan = hosted_->plan();
  Clock::duration poll = std::chrono::seconds(1);
  if (stall_timeout > Clock::duration::zero()) {
    poll = std::min<Clock::duration>(
        poll, std::max<Clock::duration>(stall_timeout / 4, std::chrono::milliseconds(1)));
  }
  if (options_.events != nullptr && !collector_->has_outputs()) {
    poll = std::min<Clock::duration>(poll, std::chrono::milliseconds(20));
  }
  int64_t last_progress = -1;
  Clock::time_point last_change = Clock::now();
  for (bool first = true;; first = false) {
    if (!first) monitor_->WaitFor(poll);
    ReportSteps();
    if (monitor_->failed()) return monitor_->failure();
    if (monitor_->all_finished()) {
      ReportSteps();
      // A share of a plan may hold actors that report none of the outputs: only a node that
      // collects them all checks that every step arrived.
      if (collector_->has_outputs() && reported_steps_ < plan.schedule().steps() &&
          options_.events != nullptr && hosted_->node().empty()) {
        return InternalError("every actor finished, but the outputs of step " +
                             std::to_string(reported_steps_) + " never all arrived");
      }
      return monitor_->failure();  // OK unless a late report broke the plan.
    }
    if (stall_timeout <= Clock::duration::zero()) continue;
    // A firing in flight is progress too: a long kernel is busy, not stalled. (A kernel that
    // never returns is therefore not reported; kernels must return.)
    int64_t progress = completed_firings();
    Clock::time_point now = Clock::now();
    if (progress != last_progress || AnyFiringInFlight()) {
      last_progress = progress;
      last_change = now;
    } else if (now - last_change >= stall_timeout) {
      monitor_->Fail(DescribeStall(now - last_change));
      return monitor_->failure();  // The stall report, or a failure that just beat it.
    }
  }
}

void Execution::ReportSteps() {
  if (options_.events == nullptr) return;
  const proto::Plan& plan = hosted_->plan();
  if (collector_->has_outputs()) {
    for (const CollectedStep& step : collector_->TakeCompletedSteps()) {
      options_.events->OnStep(step);
      reported_steps_ = step.step + 1;
    }
    return;
  }
  // No outputs: a step is complete once every actor completed the firings that cover it.
  int64_t pieces_per_step = std::max<int64_t>(1, plan.schedule().pieces_per_step());
  int64_t complete = plan.schedule().steps();
  for (int64_t id : hosted_->actors()) {
    const ActorBinding& binding = *hosted_->bindings()[static_cast<size_t>(id)];
    int64_t pieces =
        binding.completed_firings.load() * std::max<int64_t>(1, binding.def().period());
    complete = std::min(complete, pieces / pieces_per_step);
  }
  Clock::time_point now = Clock::now();
  for (; reported_steps_ < complete; ++reported_steps_) {
    CollectedStep step;
    step.step = reported_steps_;
    step.completed_at = now;
    options_.events->OnStep(step);
  }
}

JobWaitStates Execution::CollectWaitStates(Clock::duration timeout) {
  // The answers go to a small actor spawned for this question, which hands them to this thread
  // (the run's, or a diagnosing one) through the inbox: no blocking actor on a thread CAF does
  // not own. Shared because the actor may handle a late answer after this call returned, until
  // its exit message arrives.
  const proto::Plan& plan = hosted_->plan();
  const auto& bindings = hosted_->bindings();
  auto inbox = std::make_shared<WaitReportInbox>();
  caf::actor collector = runtime_->system().spawn<WaitReportCollector>(inbox);
  std::vector<int64_t> unfinished;
  for (int64_t id : hosted_->actors()) {
    if (bindings[static_cast<size_t>(id)]->finished.load()) continue;
    unfinished.push_back(id);
    caf::anon_send(hosted_->directory()->Get(id), describe_wait_atom_v, collector);
  }
  std::map<int64_t, WaitReport> reports;
  {
    const auto deadline = Clock::now() + timeout;
    MutexLock lock(&inbox->mutex);
    while (inbox->reports.size() < unfinished.size()) {
      if (!inbox->arrived.WaitUntil(&lock, deadline)) break;
    }
    reports = inbox->reports;
  }
  caf::anon_send_exit(collector, caf::exit_reason::user_shutdown);
  JobWaitStates states;
  states.job_name = plan.job_name();
  states.elapsed_seconds = std::chrono::duration<double>(Clock::now() - started_at_).count();
  states.completed_firings = completed_firings();
  states.actors = static_cast<int64_t>(hosted_->actors().size());
  for (int64_t id : unfinished) {
    const ActorBinding& binding = *bindings[static_cast<size_t>(id)];
    auto found = reports.find(id);
    if (found != reports.end()) {
      if (static_cast<actors::WaitState::Kind>(found->second.kind) ==
          actors::WaitState::Kind::kFinished) {
        continue;  // Finished while we asked.
      }
      states.waits.push_back(DescribeActorWait(plan, found->second));
    } else if (!binding.finished.load()) {
      states.waits.push_back(DescribeSilentActor(plan, id, binding.completed_firings.load()));
    }
  }
  states.unfinished = static_cast<int64_t>(states.waits.size());
  return states;
}

Status Execution::DescribeStall(std::chrono::duration<double> idle) {
  JobWaitStates states =
      CollectWaitStates(std::chrono::duration_cast<Clock::duration>(kWaitReportTimeout));
  if (options_.events != nullptr) options_.events->OnStall(states);
  char idle_text[32];
  std::snprintf(idle_text, sizeof(idle_text), "%.2f", idle.count());
  return DeadlineExceededError("job stalled: no actor completed a firing for " +
                               std::string(idle_text) + " s; " + std::to_string(states.unfinished) +
                               " of " + std::to_string(states.actors) +
                               " actors have not finished:" + states.Lines(kMaxReportedActors));
}

void Execution::StopActors() {
  for (int64_t id : hosted_->actors()) {
    caf::anon_send_exit(hosted_->directory()->Get(id), caf::exit_reason::user_shutdown);
  }
}

}  // namespace runtime
}  // namespace softwire
