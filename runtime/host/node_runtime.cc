#include "runtime/host/node_runtime.h"

#include <caf/all.hpp>

#include "base/mutex.h"
#include "plan/labels.h"
#include "runtime/host/host_messages.h"
#include "runtime/host/hosted_plan.h"
#include "runtime/kernels/cpu/cpu_kernels.h"

namespace softwire {
namespace runtime {
namespace {

// What the sim clock sends wake_atom to: a message that gets a scheduler worker going (and,
// with SpinningWorkSharing, spinning) just before a completion arrives.
class WakeTarget final : public caf::event_based_actor {
 public:
  explicit WakeTarget(caf::actor_config& config) : caf::event_based_actor(config) {}

  caf::behavior make_behavior() override {
    return {[](wake_atom) {}};
  }
};

}  // namespace

namespace {

// NodeRuntimeOptions::blas_threads, applied.
void ConfigureBlas(int blas_threads) {
  if (blas_threads > 0) {
    SetBlasThreads(blas_threads);
  } else if (blas_threads == 0) {
    RunBlasOnCallingThreads();
  }
}

}  // namespace

StatusOr<std::unique_ptr<NodeRuntime>> NodeRuntime::Create(NodeRuntimeOptions options) {
  std::unique_ptr<NodeRuntime> runtime(new NodeRuntime(std::move(options)));
  DeviceEnvironment environment;
  environment.kernels = runtime->options_.kernels;
  int cpu_devices = 0;
  for (const DeviceSpec& spec : runtime->options_.devices) {
    if (spec.device.kind() == proto::DEVICE_KIND_SIM && runtime->sim_clock_ == nullptr) {
      runtime->sim_clock_ = std::make_unique<SimClock>(runtime->options_.sim);
      environment.sim_clock = runtime->sim_clock_.get();
    }
    if (spec.device.kind() == proto::DEVICE_KIND_CPU) ++cpu_devices;
    SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, CreateDevice(spec, environment));
    if (!runtime->devices_by_name_.emplace(device->name(), device.get()).second) {
      return InvalidArgumentError("device '" + device->name() + "' is listed twice");
    }
    runtime->devices_.push_back(std::move(device));
  }
  if (cpu_devices > 0) ConfigureBlas(runtime->options_.blas_threads);
  SOFTWIRE_RETURN_IF_ERROR(ConfigureCaf(runtime->options_.caf, cpu_devices,
                                        /*has_sim_devices=*/runtime->sim_clock_ != nullptr,
                                        &runtime->config_));
  runtime->system_ = std::make_unique<caf::actor_system>(runtime->config_);
  if (runtime->sim_clock_ != nullptr) {
    caf::actor target = runtime->system_->spawn<WakeTarget>();
    runtime->wake_target_ = target;
    runtime->sim_clock_->SetWakeHost([target] { caf::anon_send(target, wake_atom_v); });
  }
  return runtime;
}

NodeRuntime::NodeRuntime(NodeRuntimeOptions options) : options_(std::move(options)) {}

NodeRuntime::~NodeRuntime() {
  // No actor is left to launch: completions still pending are dropped, and the clock's thread
  // sends nothing more.
  if (sim_clock_ != nullptr) {
    sim_clock_->SetWakeHost(nullptr);
    sim_clock_->Stop();
  }
  if (wake_target_) {
    caf::anon_send_exit(wake_target_, caf::exit_reason::user_shutdown);
    wake_target_ = caf::actor();  // Handles die before the system they belong to.
  }
  system_.reset();  // Joins the CAF workers once every actor is done.
}

StatusOr<std::unique_ptr<HostedPlan>> NodeRuntime::Host(const proto::Plan& plan,
                                                        const std::string& node,
                                                        const data::DataRoot& data_root) {
  SOFTWIRE_ASSIGN_OR_RETURN(std::unique_ptr<HostedPlan> hosted,
                            HostedPlan::Load(this, plan, node, /*job=*/0, data_root));
  SOFTWIRE_RETURN_IF_ERROR(hosted->Bind({}));
  return hosted;
}

Device* NodeRuntime::FindDevice(const std::string& name) const {
  auto found = devices_by_name_.find(name);
  return found == devices_by_name_.end() ? nullptr : found->second;
}

SimClockStats NodeRuntime::sim_stats() const {
  return sim_clock_ != nullptr ? sim_clock_->stats() : SimClockStats();
}

actors::JobId NodeRuntime::NewJobId() {
  MutexLock lock(&mutex_);
  return ++last_job_;
}

Status NodeRuntime::Claim(const std::string& device, actors::JobId job) {
  MutexLock lock(&mutex_);
  auto [entry, inserted] = claimed_by_.emplace(device, job);
  if (!inserted && entry->second != job) {
    return FailedPreconditionError("device '" + device + "' is in use by job " +
                                   std::to_string(entry->second) + "; job " + std::to_string(job) +
                                   " cannot use it too");
  }
  return Status::Ok();
}

void NodeRuntime::Release(actors::JobId job) {
  MutexLock lock(&mutex_);
  for (auto entry = claimed_by_.begin(); entry != claimed_by_.end();) {
    entry = entry->second == job ? claimed_by_.erase(entry) : std::next(entry);
  }
}

}  // namespace runtime
}  // namespace softwire
