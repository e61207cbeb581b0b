// check_deadlock: the plan must be able to run. The firing rule is simulated without time
// (slot_simulator.h) for up to two steps: one step exercises every per-piece pipeline and the
// accumulate -> update -> variable cycle once; the second proves the cycle hands its credit
// back (the variable's slot returns after the update). Later steps repeat the second's state.
#include <algorithm>

#include "compiler/passes/passes.h"
#include "compiler/slot_simulator.h"

namespace softwire {
namespace compiler {

Status CheckDeadlockPass(Compilation& compilation) {
  const CompilationSchedule& schedule = compilation.schedule;
  const int64_t steps = std::min<int64_t>(schedule.steps, 2);
  SimulationResult result =
      SlotSimulator(compilation.tasks, steps * schedule.pieces_per_step).Run();
  if (result.finished) return Status::Ok();
  std::string message = "the plan would deadlock: after " + std::to_string(result.firings) +
                        " of " + std::to_string(result.expected_firings) + " firings (" +
                        std::to_string(steps) + " steps) no actor can fire";
  if (!result.cycle.empty()) message += "; cycle of waits: " + result.cycle;
  const size_t shown = std::min<size_t>(result.waits.size(), 8);
  for (size_t i = 0; i < shown; ++i) message += "; " + result.waits[i];
  if (result.waits.size() > shown) {
    message += "; and " + std::to_string(result.waits.size() - shown) + " more";
  }
  return FailedPreconditionError(message);
}

}  // namespace compiler
}  // namespace softwire
