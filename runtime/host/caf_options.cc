#include "runtime/host/caf_options.h"

#include <algorithm>
#include <caf/atom.hpp>
#include <caf/config_option_adder.hpp>
#include <caf/scheduler/coordinator.hpp>
#include <limits>
#include <thread>

#include "runtime/host/caf_thread_names.h"
#include "runtime/host/host_messages.h"
#include "runtime/host/reserve_work_sharing.h"
#include "runtime/host/spinning_work_sharing.h"

namespace softwire {
namespace runtime {

HostCafConfig::HostCafConfig() {
  opt_group{custom_options_, "softwire"}.add<size_t>(
      "worker-spin-us", "how long an idle scheduler worker spins before it sleeps");
}

int CafThreads(const CafOptions& options, int cpu_devices) {
  if (options.max_threads > 0) return options.max_threads;
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, std::min(cpu_devices, cores)) + (options.transfer_worker ? 1 : 0);
}

int WorkerSpinUs(const CafOptions& options, bool has_sim_devices) {
  if (options.worker_spin_us >= 0) return options.worker_spin_us;
  return has_sim_devices && options.policy == "sharing" ? kSimWorkerSpinUs : 0;
}

int SimOnlyWorkerSpinUs(double longest_launch_seconds) {
  const double spin_us = 1.25 * longest_launch_seconds * 1e6 + kSimWorkerSpinUs;
  return static_cast<int>(std::min<double>(spin_us, kMaxSimWorkerSpinUs));
}

Status ConfigureCaf(const CafOptions& options, int cpu_devices, bool has_sim_devices,
                    HostCafConfig* config) {
  if (options.policy != "sharing" && options.policy != "stealing") {
    return InvalidArgumentError("CAF scheduler policy '" + options.policy +
                                "' is unknown; use 'sharing' or 'stealing'");
  }
  const int spin = WorkerSpinUs(options, has_sim_devices);
  if (spin > 0 && options.policy != "sharing") {
    return InvalidArgumentError("workers spin only with the 'sharing' policy, not '" +
                                options.policy + "'");
  }
  config->set("scheduler.policy", caf::atom_from_string(options.policy));
  config->set("scheduler.max-threads", static_cast<size_t>(CafThreads(options, cpu_devices)));
  config->set("scheduler.max-throughput", options.max_throughput > 0
                                              ? static_cast<size_t>(options.max_throughput)
                                              : std::numeric_limits<size_t>::max());
  if (spin > 0) {
    config->set(kWorkerSpinKey, static_cast<size_t>(spin));
    // A scheduler module loaded by the user replaces the one `scheduler.policy` names.
    config->load<caf::scheduler::coordinator<SpinningWorkSharing>>();
  } else if (options.transfer_worker && options.max_threads <= 0 && options.policy == "sharing") {
    // The transfer worker is the reserve: it takes work only while every other worker runs a
    // long kernel (reserve_work_sharing.h).
    config->load<caf::scheduler::coordinator<ReserveWorkSharing>>();
  }
  config->add_thread_hook<CafThreadNames>(options.worker_cores, options.worker_names);
  config->add_message_types<caf::id_block::softwire_runtime>();
  return Status::Ok();
}

}  // namespace runtime
}  // namespace softwire
