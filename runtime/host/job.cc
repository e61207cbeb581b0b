#include "runtime/host/job.h"

#include <algorithm>
#include <caf/all.hpp>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <thread>

#include "base/thread_affinity.h"
#include "plan/labels.h"
#include "runtime/host/host_actor.h"
#include "runtime/host/host_messages.h"
#include "runtime/host/stall_report.h"

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
  std::mutex mutex;
  std::condition_variable arrived;
  std::map<int64_t, WaitReport> reports;  // Guarded by mutex.
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
      std::lock_guard<std::mutex> lock(inbox_->mutex);
      inbox_->reports[report.actor] = std::move(report);
      inbox_->arrived.notify_all();
    }};
  }

 private:
  std::shared_ptr<WaitReportInbox> inbox_;
};

// What the sim clock sends wake_atom to: a message that gets a scheduler worker going (and,
// with SpinningWorkSharing, spinning) just before a completion arrives.
class WakeTarget final : public caf::event_based_actor {
 public:
  explicit WakeTarget(caf::actor_config& config) : caf::event_based_actor(config) {}

  caf::behavior make_behavior() override {
    return {[](wake_atom) {}};
  }
};

// Cores for a device of `threads` kernel threads whose first thread takes allowed[first]: the
// next `threads` allowed cores, wrapping around when the process has fewer.
std::vector<int> DeviceCores(const std::vector<int>& allowed, size_t first, int threads) {
  std::vector<int> cores;
  for (int thread = 0; thread < threads; ++thread) {
    cores.push_back(allowed[(first + static_cast<size_t>(thread)) % allowed.size()]);
  }
  return cores;
}

}  // namespace

StatusOr<std::unique_ptr<Job>> Job::Create(const proto::Plan& plan, JobOptions options) {
  std::unique_ptr<Job> job(new Job(plan, std::move(options)));
  SOFTWIRE_ASSIGN_OR_RETURN(job->descriptions_, actors::DescribeActors(plan));
  // Queues per device: one more than the highest index its actors name.
  std::vector<int> queues(plan.device_size(), 1);
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.device() < 0 || actor.device() >= plan.device_size() || actor.queue() < 0) {
      return InvalidArgumentError(plan::ActorLabel(actor.name()) + ": device " +
                                  std::to_string(actor.device()) + " queue " +
                                  std::to_string(actor.queue()) + " does not exist");
    }
    queues[actor.device()] = std::max(queues[actor.device()], actor.queue() + 1);
  }
  const std::vector<int> allowed_cores = AllowedCores();
  size_t next_core = 0;  // With pinned threads: the first core of the next cpu device.
  DeviceEnvironment environment;
  environment.kernels = job->options_.kernels;
  for (const proto::PlanDevice& plan_device : plan.device()) {
    if (plan_device.kind() == proto::DEVICE_KIND_SIM && job->sim_clock_ == nullptr) {
      job->sim_clock_ = std::make_unique<SimClock>(job->options_.sim);
      environment.sim_clock = job->sim_clock_.get();
    }
    DeviceSpec spec;
    spec.device = plan_device;
    spec.queues = queues[job->devices_.size()];
    spec.options = job->options_.device;
    if (job->options_.pin_threads && plan_device.kind() == proto::DEVICE_KIND_CPU &&
        !allowed_cores.empty()) {
      spec.options.cores =
          DeviceCores(allowed_cores, next_core, KernelThreads(plan_device, spec.options));
      next_core += spec.options.cores.size();
    }
    SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, CreateDevice(spec, environment));
    SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<DeviceArena> arena,
                              device->AllocateArena(plan_device.planned_bytes()));
    job->devices_.push_back(std::move(device));
    job->arenas_.push_back(std::move(arena));
  }
  std::vector<Device*> devices;
  for (const auto& device : job->devices_) devices.push_back(device.get());
  SOFTWIRE_ASSIGN_OR_RETURN(job->slots_, LocateRegisterSlots(plan, job->arenas_));
  LaunchWiring wiring;
  wiring.listener = job->directory_.get();
  wiring.stopping = &job->monitor_->stopping();
  SOFTWIRE_ASSIGN_OR_RETURN(job->bindings_,
                            BindActors(plan, job->descriptions_, devices, job->arenas_, job->slots_,
                                       wiring, job->collector_.get()));
  if (job->options_.trace.enabled) {
    SOFTWIRE_ASSIGN_OR_RETURN(job->trace_,
                              JobTrace::Create(plan, job->descriptions_, job->options_.trace));
  }
  return job;
}

Job::Job(const proto::Plan& plan, JobOptions options)
    : plan_(plan),
      options_(std::move(options)),
      monitor_(std::make_unique<JobMonitor>(plan.actor_size())),
      directory_(std::make_unique<ActorDirectory>(plan.actor_size())),
      collector_(std::make_unique<StepCollector>(plan, monitor_.get(),
                                                 /*notify_steps=*/options_.on_step != nullptr)) {}

Job::~Job() {
  // The devices' queues borrow the clock; its thread must be gone before they are.
  if (sim_clock_ != nullptr) sim_clock_->Stop();
}

SimClockStats Job::sim_stats() const {
  return sim_clock_ != nullptr ? sim_clock_->stats() : SimClockStats();
}

caf::actor Job::StartWakingHost(caf::actor_system& system) {
  if (sim_clock_ == nullptr) return caf::actor();
  caf::actor target = system.spawn<WakeTarget>();
  sim_clock_->SetWakeHost([target] { caf::anon_send(target, wake_atom_v); });
  return target;
}

int Job::CpuDevices() const {
  return static_cast<int>(std::count_if(devices_.begin(), devices_.end(), [](const auto& device) {
    return device->kind() == proto::DEVICE_KIND_CPU;
  }));
}

bool Job::AnyFiringInFlight() const {
  for (const auto& binding : bindings_) {
    if (binding->firing_in_flight.load(std::memory_order_relaxed)) return true;
  }
  return false;
}

int64_t Job::completed_firings() const {
  int64_t total = 0;
  for (const auto& binding : bindings_) total += binding->completed_firings.load();
  return total;
}

Status Job::Run() {
  CHECK(!ran_) << "Job::Run called twice";
  ran_ = true;
  HostCafConfig config;  // Must outlive the system, which keeps a reference.
  CafOptions caf = options_.caf;
  // The long spin only pays while the workers leave a core to the sim timer thread: with more
  // workers, those woken for the spinner's overflow take the timer's core (six workers on two
  // cores stretched 10 ms launches to 11 ms).
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (caf.worker_spin_us < 0 && sim_clock_ != nullptr && CpuDevices() == 0 &&
      caf.policy == "sharing" && CafThreads(caf, 0) < cores) {
    double longest = 0;
    for (const proto::ActorDef& actor : plan_.actor()) {
      longest = std::max(longest, actor.estimated_seconds());
    }
    caf.worker_spin_us = SimOnlyWorkerSpinUs(longest);
  }
  // Worker w holds the strands of devices whose thread 0 it is: with pinned threads, it runs
  // on the core the first such device gives its thread 0 (one device: the first allowed core).
  if (options_.pin_threads && caf.worker_cores.empty()) {
    for (const auto& device : devices_) {
      if (device->kind() == proto::DEVICE_KIND_CPU && !device->cores().empty()) {
        caf.worker_cores.push_back(device->cores()[0]);
      }
    }
  }
  SOFTWIRE_RETURN_IF_ERROR(
      ConfigureCaf(caf, CpuDevices(), /*has_sim_devices=*/sim_clock_ != nullptr, &config));
  Status status;
  {
    caf::actor_system system{config};
    caf::actor wake_target = StartWakingHost(system);
    for (const auto& binding : bindings_) {
      ActorTracer* tracer = trace_ ? trace_->tracer(binding->def().id()) : nullptr;
      directory_->Set(binding->def().id(), system.spawn<HostActor>(binding.get(), directory_.get(),
                                                                   monitor_.get(), tracer));
    }
    if (trace_) trace_->Started();
    started_at_ = Clock::now();
    {
      std::lock_guard<std::mutex> lock(running_mutex_);
      running_system_ = &system;
    }
    for (int64_t id = 0; id < directory_->size(); ++id) {
      caf::anon_send(directory_->Get(id), start_atom_v);
    }
    status = WaitForEnd(system);
    if (!status.ok()) StopActors();
    if (wake_target) {
      sim_clock_->SetWakeHost(nullptr);
      caf::anon_send_exit(wake_target, caf::exit_reason::user_shutdown);
      wake_target = caf::actor();
    }
    system.await_all_actors_done();
    // No actor is left to launch; completions still pending are dropped, and the clock's
    // thread sends nothing more to actors whose handles die below.
    if (sim_clock_ != nullptr) sim_clock_->Stop();
    {
      std::lock_guard<std::mutex> lock(running_mutex_);  // Waits for a DescribeWaits.
      running_system_ = nullptr;
      system_ended_ = true;
    }
    // Handles die before the system they belong to.
    directory_->Clear();
  }
  run_status_ = status;
  return status;
}

StatusOr<JobWaitStates> Job::DescribeWaits(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(running_mutex_);
  if (running_system_ == nullptr || monitor_->all_finished() || monitor_->failed()) {
    const bool ended = system_ended_ || monitor_->all_finished() || monitor_->failed();
    return FailedPreconditionError("job '" + plan_.job_name() + "' is not running" +
                                   (ended ? " any more" : " yet"));
  }
  JobWaitStates states = CollectWaitStates(*running_system_, timeout);
  // Spawning and sending from a thread CAF does not own makes CAF 0.17 keep a reference to the
  // system's logger in that thread's thread-local storage, and the actor_system destructor
  // waits until the logger is destroyed: it would wait forever. Drop the reference.
  caf::logger::set_current_actor_system(nullptr);
  return states;
}

void Job::Cancel(const std::string& reason) {
  monitor_->Fail(CancelledError(reason));
}

std::optional<trace::TraceLog> Job::TakeTrace() {
  if (!trace_ || !ran_) return std::nullopt;
  std::optional<trace::TraceLog> log =
      trace_->TakeLog(run_status_.ok() ? "ok" : run_status_.ToString());
  trace_.reset();
  return log;
}

Status Job::WaitForEnd(caf::actor_system& system) {
  const Clock::duration stall_timeout = options_.stall_timeout;
  Clock::duration poll = std::chrono::seconds(1);
  if (stall_timeout > Clock::duration::zero()) {
    poll = std::min<Clock::duration>(
        poll, std::max<Clock::duration>(stall_timeout / 4, std::chrono::milliseconds(1)));
  }
  if (options_.on_step && !collector_->has_outputs()) {
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
      if (collector_->has_outputs() && reported_steps_ < plan_.schedule().steps() &&
          options_.on_step) {
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
      monitor_->Fail(DescribeStall(system, now - last_change));
      return monitor_->failure();  // The stall report, or a failure that just beat it.
    }
  }
}

void Job::ReportSteps() {
  if (!options_.on_step) return;
  if (collector_->has_outputs()) {
    for (const CollectedStep& step : collector_->TakeCompletedSteps()) {
      options_.on_step(step);
      reported_steps_ = step.step + 1;
    }
    return;
  }
  // No outputs: a step is complete once every actor completed the firings that cover it.
  int64_t pieces_per_step = std::max<int64_t>(1, plan_.schedule().pieces_per_step());
  int64_t complete = plan_.schedule().steps();
  for (const auto& binding : bindings_) {
    int64_t pieces =
        binding->completed_firings.load() * std::max<int64_t>(1, binding->def().period());
    complete = std::min(complete, pieces / pieces_per_step);
  }
  Clock::time_point now = Clock::now();
  for (; reported_steps_ < complete; ++reported_steps_) {
    CollectedStep step;
    step.step = reported_steps_;
    step.completed_at = now;
    options_.on_step(step);
  }
}

JobWaitStates Job::CollectWaitStates(caf::actor_system& system, Clock::duration timeout) {
  // The answers go to a small actor spawned for this question, which hands them to this thread
  // (the job's, or a diagnosing one) through the inbox: no blocking actor on a thread CAF does
  // not own. Shared because the actor may handle a late answer after this call returned, until
  // its exit message arrives.
  auto inbox = std::make_shared<WaitReportInbox>();
  caf::actor collector = system.spawn<WaitReportCollector>(inbox);
  std::vector<int64_t> unfinished;
  for (const auto& binding : bindings_) {
    if (binding->finished.load()) continue;
    unfinished.push_back(binding->def().id());
    caf::anon_send(directory_->Get(binding->def().id()), describe_wait_atom_v, collector);
  }
  std::map<int64_t, WaitReport> reports;
  {
    std::unique_lock<std::mutex> lock(inbox->mutex);
    inbox->arrived.wait_for(lock, timeout,
                            [&] { return inbox->reports.size() >= unfinished.size(); });
    reports = inbox->reports;
  }
  caf::anon_send_exit(collector, caf::exit_reason::user_shutdown);
  JobWaitStates states;
  states.job_name = plan_.job_name();
  states.elapsed_seconds = std::chrono::duration<double>(Clock::now() - started_at_).count();
  states.completed_firings = completed_firings();
  states.actors = static_cast<int64_t>(bindings_.size());
  for (int64_t id : unfinished) {
    auto found = reports.find(id);
    if (found != reports.end()) {
      if (static_cast<actors::WaitState::Kind>(found->second.kind) ==
          actors::WaitState::Kind::kFinished) {
        continue;  // Finished while we asked.
      }
      states.waits.push_back(DescribeActorWait(plan_, found->second));
    } else if (!bindings_[static_cast<size_t>(id)]->finished.load()) {
      states.waits.push_back(DescribeSilentActor(
          plan_, id, bindings_[static_cast<size_t>(id)]->completed_firings.load()));
    }
  }
  states.unfinished = static_cast<int64_t>(states.waits.size());
  return states;
}

Status Job::DescribeStall(caf::actor_system& system, std::chrono::duration<double> idle) {
  JobWaitStates states =
      CollectWaitStates(system, std::chrono::duration_cast<Clock::duration>(kWaitReportTimeout));
  char idle_text[32];
  std::snprintf(idle_text, sizeof(idle_text), "%.2f", idle.count());
  return DeadlineExceededError("job stalled: no actor completed a firing for " +
                               std::string(idle_text) + " s; " + std::to_string(states.unfinished) +
                               " of " + std::to_string(states.actors) +
                               " actors have not finished:" + states.Lines(kMaxReportedActors));
}

void Job::StopActors() {
  for (int64_t id = 0; id < directory_->size(); ++id) {
    caf::anon_send_exit(directory_->Get(id), caf::exit_reason::user_shutdown);
  }
}

}  // namespace runtime
}  // namespace softwire
