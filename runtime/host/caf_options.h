// CafOptions: how the CAF actor system of a job is configured, explicitly.
//
// Defaults, measured on the 2-core build machine (docs/MACHINE.md, docs/RUNTIME.md):
//   - scheduler.max-threads: one worker per cpu device, capped at this machine's cores. A cpu
//     device runs its kernels inline on the worker that holds its strand and spreads loops over
//     its own kernel threads, so more workers would only add cross-thread wake-ups (~80 us each
//     on a small VM). CAF's own default, max(cores, 4), cut pipeline throughput by a third.
//     A plan of sim devices only gets one worker: their kernels take no CPU. A process with a
//     data plane (a node agent) gets one worker more, in reserve (CafOptions::transfer_worker,
//     reserve_work_sharing.h).
//   - scheduler.policy `sharing`: beat work stealing for pipelines and round trips on 2 cores,
//     and leaves no worker polling when idle. Re-measure on bigger machines.
//   - workers spin before they sleep only in plans with sim devices (SpinningWorkSharing,
//     spinning_work_sharing.h): there every completion comes from the sim timer thread, and a
//     sleeping worker's wake-up would be added to the device's time.
//   - scheduler.max-throughput 300: an actor yields its worker after 300 messages, so one busy
//     actor cannot starve the others of a shared worker.
// Every field can be overridden (RunOptions, `softwire run --caf-threads ...`).
#ifndef SOFTWIRE_RUNTIME_HOST_CAF_OPTIONS_H_
#define SOFTWIRE_RUNTIME_HOST_CAF_OPTIONS_H_

#include <caf/actor_system_config.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace softwire {
namespace runtime {

struct CafOptions {
  // Scheduler worker threads; <= 0: one per cpu device of the plan, capped at the machine's
  // cores, at least 1.
  int max_threads = 0;
  // With max_threads <= 0: one worker more than the cpu devices' strands hold, so Readies and
  // Releases from other processes, and the sends and recvs of the devices' copy strands, are
  // handled while every compute strand runs a kernel on its worker. With the sharing policy and
  // no spin it is a reserve (ReserveWorkSharing): it takes work only while every other worker
  // runs a long kernel, so short firings keep to one thread. For a process that moves
  // bytes to other processes (a node agent): there a single worker running a 6 ms kernel held
  // every transfer of its node back for as long, and the pipeline with it (docs/DECISIONS.md 37).
  bool transfer_worker = false;
  // "sharing" or "stealing".
  std::string policy = "sharing";
  // Messages an actor handles before it yields its worker; <= 0: unlimited.
  int max_throughput = 300;
  // With policy "sharing": how long an idle worker spins before it sleeps, microseconds.
  // < 0: kSimWorkerSpinUs for plans with sim devices, 0 (CAF's own policy) otherwise.
  int worker_spin_us = -1;
  // When not empty, scheduler worker w runs only on core worker_cores[w % size].
  std::vector<int> worker_cores;
  // Worker w is named worker_names[w] where there is one, "sw:caf/<w>" otherwise (a process
  // with one cpu device and one worker names it after the device's thread 0, "sw:cpu0/k0").
  std::vector<std::string> worker_names;
};

// The spin of workers in plans with sim devices: about twice SimClockOptions::host_awake, so a
// worker the sim timer woke still spins when the completion comes (docs/RUNTIME.md).
constexpr int kSimWorkerSpinUs = 400;

// Plans of sim devices only, with fewer CAF workers than cores (the default: one): workers spin
// across the longest launch (times 1.25, plus
// kSimWorkerSpinUs), capped at kMaxSimWorkerSpinUs, so a completion never finds the worker
// asleep. A sleeping worker wakes 60-80 us late here, and in a balanced pipeline every piece's
// late start delays the whole step: at 400 us of spin, 8 stages x 2 ms x 64 pieces ran 3-4%
// over the ideal, at a spin beyond the stage 0.4% (BENCHMARKS.md). The price is one core
// spinning through the run, which a sim run (no compute on this machine) can pay.
constexpr int kMaxSimWorkerSpinUs = 20000;
int SimOnlyWorkerSpinUs(double longest_launch_seconds);

// The actor_system_config of a job: CAF's, plus the softwire keys its scheduler reads.
class HostCafConfig : public caf::actor_system_config {
 public:
  HostCafConfig();
};

// Worker threads the options give for a plan with `cpu_devices` cpu devices: max_threads, or
// one per cpu device capped at the machine's cores (at least 1), plus the transfer worker.
int CafThreads(const CafOptions& options, int cpu_devices);

// The worker spin the options give for a plan (with or without sim devices), microseconds.
int WorkerSpinUs(const CafOptions& options, bool has_sim_devices);

// Writes the options into `config` (scheduler.policy, max-threads, max-throughput, the worker
// spin, installing SpinningWorkSharing when it is > 0), names CAF's threads (and pins its
// workers to worker_cores) through CafThreadNames, and registers the runtime's message types.
// InvalidArgument for an unknown policy, or a spin with a policy other than sharing. `config` is
// otherwise untouched; it reads no file and no command line.
Status ConfigureCaf(const CafOptions& options, int cpu_devices, bool has_sim_devices,
                    HostCafConfig* config);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_CAF_OPTIONS_H_
