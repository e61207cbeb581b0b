// SimulationResult: what one simulated run measured, in virtual time, and what it cost in
// wall time. simulation_report.h prints it.
//
// Definitions (all times virtual nanoseconds since the run started, when every actor started):
//   - a firing belongs to the step of its first piece: (index * period) / pieces_per_step;
//   - step s ends when the last firing belonging to it ends (for a training plan, usually its
//     optimizer updates or the sync after them; for a forward-only plan, its sinks);
//   - step_ns[s] = step_end_ns[s] - step_end_ns[s - 1] (step 0: from 0);
//   - the steady steps are every step but the first when there are at least two (the first
//     fills the pipeline), else all; steady_step_ns is their mean,
//     (step_end_ns[last] - step_end_ns[0]) / (steps - 1);
//   - the pipeline's firings are those of compute actors (every actor in a plan without
//     compute actors), as in trace/trace_summary.h; a step's span and the steady window begin
//     with the first start of a firing of an actor trace::StepStartingActors names (a compute
//     actor that reads a variable: those fed only by sources run steps ahead) and end with the
//     last end of a pipeline firing;
//   - a queue's utilization is its busy time over the whole run; its steady utilization, its
//     busy time within the steady window over the window;
//   - the measured bubble is, over the steady steps, the idle share of the devices within each
//     step's span (as above), counting for each step the
//     devices that ran its pipeline firings and any pipeline firing as busy, as
//     trace::Summarize measures it; beside it, the formula (p-1)/(m+p-1) with p the plan's
//     stages and m its pieces per step;
//   - memory: a register's slots are in use from the launch of the firing that begins a fill
//     until every consumer released it (ActorProtocol::occupied_slots); a device's high-water is
//     the most register bytes in use at once plus its actors' workspaces and state.
#ifndef SOFTWIRE_SIMULATOR_SIMULATION_RESULT_H_
#define SOFTWIRE_SIMULATOR_SIMULATION_RESULT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/sim_time.h"

namespace softwire {
namespace simulator {

// One device queue (a device's compute queue 0, its copy queues 1 and up).
struct QueueUsage {
  int32_t device = 0;
  int32_t queue = 0;
  int64_t firings = 0;
  SimTime busy_ns = 0;
  double utilization = 0;          // busy_ns / total_ns.
  double steady_utilization = -1;  // Within the steady window; -1 when not recorded.
};

struct DeviceMemory {
  int32_t device = 0;
  int64_t planned_bytes = 0;           // PlanDevice.planned_bytes: what the runtime allocates.
  int64_t planned_register_bytes = 0;  // PlanDevice.register_bytes: every slot of every register.
  int64_t fixed_bytes = 0;             // Workspaces and actor state of its actors.
  int64_t register_high_water = 0;     // Most register bytes in use at once.
  int64_t high_water() const { return register_high_water + fixed_bytes; }
};

struct SimulationResult {
  std::string job_name;
  std::vector<std::string> device_names;  // "node0/sim:0", plan order.
  int64_t actors = 0;
  int64_t steps = 0;
  int64_t pieces_per_step = 1;
  int stages = 1;  // Distinct ActorDef.stage values.

  SimTime total_ns = 0;  // When the last event happened: every actor had finished.
  std::vector<SimTime> step_end_ns;
  std::vector<SimTime> step_ns;
  int64_t first_steady_step = 0;
  SimTime steady_step_ns = 0;
  SimTime steady_begin_ns = 0;  // The steady window.
  SimTime steady_end_ns = 0;

  std::vector<QueueUsage> queues;  // By device, then queue.
  double bubble_formula = 0;
  double bubble_measured = -1;  // -1: not recorded, or no steady step ran pipeline firings.

  std::vector<DeviceMemory> memory;  // Plan device order.

  int64_t firings = 0;
  int64_t messages = 0;
  int64_t events = 0;  // Messages delivered plus firings completed.
  int64_t max_messages_in_flight = 0;
  double wall_seconds = 0;  // Run's wall time, setup excluded.
  double events_per_second = 0;
};

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_SIMULATION_RESULT_H_
