#include "runtime/host/caf_options.h"

#include <algorithm>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <thread>

#include "runtime/host/host_messages.h"

namespace softwire {
namespace runtime {

int CafThreads(const CafOptions& options, int cpu_devices) {
  if (options.max_threads > 0) return options.max_threads;
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, std::min(cpu_devices, cores));
}

Status ConfigureCaf(const CafOptions& options, int cpu_devices, caf::actor_system_config* config) {
  if (options.policy != "sharing" && options.policy != "stealing") {
    return InvalidArgumentError("CAF scheduler policy '" + options.policy +
                                "' is unknown; use 'sharing' or 'stealing'");
  }
  config->set("scheduler.policy", caf::atom_from_string(options.policy));
  config->set("scheduler.max-threads", static_cast<size_t>(CafThreads(options, cpu_devices)));
  config->set("scheduler.max-throughput", options.max_throughput > 0
                                              ? static_cast<size_t>(options.max_throughput)
                                              : std::numeric_limits<size_t>::max());
  config->add_message_types<caf::id_block::softwire_runtime>();
  return Status::Ok();
}

}  // namespace runtime
}  // namespace softwire
