// SimulationOptions: how `softwire simulate` runs a plan in virtual time (simulator.h).
//
//   SimulationOptions options;
//   options.steps = 20;                         // override the plan's steps
//   options.latency.message_ns = 0;             // messages take no time (closed-form tests)
//   options.trace_writer = trace->writer();     // record firings (simulation_trace.h)
#ifndef SOFTWIRE_SIMULATOR_SIMULATION_OPTIONS_H_
#define SOFTWIRE_SIMULATOR_SIMULATION_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/sim_time.h"
#include "trace/trace_recorder.h"

namespace softwire {
namespace simulator {

// The link latency between two nodes, both ways.
struct NodePairLatency {
  std::string node_a;
  std::string node_b;
  SimTime latency_ns = 0;
};

// How long a protocol message (Ready, Release, EndOfStream) takes from the moment its sender's
// protocol emits it to the moment its receiver's protocol handles it. Bytes are not modelled
// here: moving data is the work of copy, send, recv and boxing actors, whose estimated_seconds
// already include it.
struct LatencyModel {
  // Every message: one mailbox hand-off between two actors, as a CAF hop costs on one node
  // (the runtime's actor-overhead benchmark measures about 0.5 us per firing with two hops;
  // 1 us is a hop across threads).
  SimTime message_ns = 1000;
  // Added to a message between actors on different nodes: the inter-node link's latency
  // (docs/PARALLELISM.md's default, 20 us), unless `node_pairs` names the pair.
  SimTime inter_node_ns = 20000;
  std::vector<NodePairLatency> node_pairs;
};

struct SimulationOptions {
  // Steps to simulate; <= 0 keeps the plan's. Every actor then fires
  // steps * pieces_per_step / period times.
  int64_t steps = 0;
  LatencyModel latency;
  // Where to record one trace::TraceEvent per firing (virtual nanoseconds, origin 0), or null.
  // Borrowed; used only during Run, from its thread.
  trace::TraceWriter* trace_writer = nullptr;
  // The steps whose firings are recorded.
  trace::StepWindow trace_steps;
  // Keep every queue's busy intervals, for the steady-state utilization and the measured
  // pipeline bubble (16 bytes per firing that takes time, fewer where kernels run back to
  // back). Off: those two are reported as unknown (-1).
  bool record_busy_intervals = true;
};

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_SIMULATION_OPTIONS_H_
