// The text `softwire simulate` prints for a SimulationResult: step times, utilization per
// device queue, the pipeline bubble beside its formula, memory per device, and what the
// simulation itself cost (events per wall second).
#ifndef SOFTWIRE_SIMULATOR_SIMULATION_REPORT_H_
#define SOFTWIRE_SIMULATOR_SIMULATION_REPORT_H_

#include <string>

#include "simulator/sim_time.h"
#include "simulator/simulation_result.h"

namespace softwire {
namespace simulator {

std::string FormatSimulationReport(const SimulationResult& result);

// "1.234 ms", "250.0 us", "12 ns", "2.500 s".
std::string FormatDuration(SimTime time);

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_SIMULATION_REPORT_H_
