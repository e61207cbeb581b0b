// CafOptions: how the CAF actor system of a job is configured, explicitly.
//
// Defaults, measured on the 2-core build machine (shared/notes/caf-0.17.md, docs/RUNTIME.md):
//   - scheduler.max-threads: one worker per cpu device, capped at this machine's cores. A cpu
//     device runs its kernels inline on the worker that holds its strand and spreads loops over
//     its own kernel threads, so more workers would only add cross-thread wake-ups (~80 us each
//     on a small VM). CAF's own default, max(cores, 4), cut pipeline throughput by a third.
//   - scheduler.policy `sharing`: beat work stealing for pipelines and round trips on 2 cores,
//     and leaves no worker polling when idle. Re-measure on bigger machines.
//   - scheduler.max-throughput 300: an actor yields its worker after 300 messages, so one busy
//     actor cannot starve the others of a shared worker.
// Every field can be overridden (RunOptions, `softwire run --caf-threads ...`).
#ifndef SOFTWIRE_RUNTIME_HOST_CAF_OPTIONS_H_
#define SOFTWIRE_RUNTIME_HOST_CAF_OPTIONS_H_

#include <string>

#include "base/status.h"

namespace caf {
class actor_system_config;
}  // namespace caf

namespace softwire {
namespace runtime {

struct CafOptions {
  // Scheduler worker threads; <= 0: one per cpu device of the plan, capped at the machine's
  // cores, at least 1.
  int max_threads = 0;
  // "sharing" or "stealing".
  std::string policy = "sharing";
  // Messages an actor handles before it yields its worker; <= 0: unlimited.
  int max_throughput = 300;
};

// Worker threads the options give for a plan with `cpu_devices` cpu devices.
int CafThreads(const CafOptions& options, int cpu_devices);

// Writes the options into `config` (scheduler.policy, max-threads, max-throughput) and
// registers the runtime's message types. InvalidArgument for an unknown policy. `config` is
// otherwise untouched; it reads no file and no command line.
Status ConfigureCaf(const CafOptions& options, int cpu_devices, caf::actor_system_config* config);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_CAF_OPTIONS_H_
