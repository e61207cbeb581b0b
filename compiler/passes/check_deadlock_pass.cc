// check_deadlock: the plan must be able to run. The firing rule is simulated without time
// (slot_simulator.h) for up to two steps: one step exercises every per-piece pipeline and the
// accumulate -> update -> variable cycle once; the second proves the cycle hands its credit
// back (the variable's slot returns after the update). Later steps repeat the second's state.
//
// Under data parallelism, one task per chain of tasks that correspond from replica to replica
// is simulated (replica_symmetry.h): the quotient of a plan at least as strict as this one, so
// that its finishing proves this plan finishes (docs/DECISIONS.md, "The deadlock check simulates
// one replica"). When it does not finish, the whole plan is simulated, which decides, and a
// deadlock's message names every stuck actor as before.
#include <algorithm>
#include <optional>

#include "compiler/passes/passes.h"
#include "compiler/replica_symmetry.h"
#include "compiler/slot_simulator.h"

namespace softwire {
namespace compiler {
namespace {

// The renaming of devices that moves every stage's data-parallel replica d to d + 1 (mod dp),
// keeping its tensor-parallel rank; empty when there is one replica.
std::vector<int> DataParallelShift(const Compilation& compilation) {
  const int replicas = compilation.parallel.data;
  if (replicas <= 1) return {};
  std::vector<int> image(compilation.devices.size());
  for (size_t d = 0; d < image.size(); ++d) image[d] = static_cast<int>(d);
  for (const placement::DeviceMesh& mesh : compilation.meshes) {
    if (mesh.shape[0] != replicas) continue;
    for (int linear = 0; linear < mesh.size(); ++linear) {
      placement::MeshCoordinate coordinate = mesh.Coordinate(linear);
      coordinate[0] = (coordinate[0] + 1) % replicas;
      const int device = mesh.devices[linear];
      if (device < 0 || device >= static_cast<int>(image.size())) return {};
      image[device] = mesh.devices[mesh.Linear(coordinate)];
    }
  }
  return image;
}

// The graph of one task per orbit, or nullopt with `*why_not` when the plan must be simulated
// whole.
std::optional<OrbitGraph> OneReplica(const Compilation& compilation, std::string* why_not) {
  const std::vector<int> shift = DataParallelShift(compilation);
  if (shift.empty()) {
    *why_not = "one data-parallel replica";
    return std::nullopt;
  }
  const int64_t replicas = compilation.parallel.data;
  std::optional<TaskGraphSymmetry> symmetry =
      FindReplicaSymmetry(compilation.tasks, shift, replicas, why_not);
  if (!symmetry) return std::nullopt;
  std::optional<OrbitGraph> orbits =
      BuildOrbitGraph(compilation.tasks, *symmetry, replicas, why_not);
  // An orbit graph hardly smaller than the plan (replicas that barely correspond) costs more
  // than it saves.
  if (orbits && orbits->graph.tasks().size() * 4 > compilation.tasks.tasks().size() * 3) {
    *why_not = "the replicas correspond in too few tasks (" +
               std::to_string(orbits->graph.tasks().size()) + " orbits of " +
               std::to_string(compilation.tasks.tasks().size()) + " tasks)";
    return std::nullopt;
  }
  return orbits;
}

}  // namespace

Status CheckDeadlockPass(Compilation& compilation) {
  const CompilationSchedule& schedule = compilation.schedule;
  const int64_t steps = std::min<int64_t>(schedule.steps, 2);
  const int64_t pieces = steps * schedule.pieces_per_step;
  DeadlockCheckReport& report = compilation.deadlock_check;
  report = DeadlockCheckReport();
  report.tasks = static_cast<int64_t>(compilation.tasks.tasks().size());
  std::optional<OrbitGraph> orbits = OneReplica(compilation, &report.whole_because);
  const TaskGraph& simulated = orbits ? orbits->graph : compilation.tasks;
  report.simulated_tasks = static_cast<int64_t>(simulated.tasks().size());
  SimulationResult result = SlotSimulator(simulated, pieces).Run();
  report.simulated_firings = result.firings;
  if (result.finished) return Status::Ok();
  if (orbits) {
    // The orbit graph is a stricter plan (the fewest slots of each orbit, the tail read by every
    // replica), so its deadlock decides nothing: simulate the whole plan, which also gives the
    // full account of who waits.
    orbits.reset();
    report.whole_because = "the one-replica simulation deadlocked";
    result = SlotSimulator(compilation.tasks, pieces).Run();
    report.simulated_tasks = report.tasks;
    report.simulated_firings += result.firings;
    if (result.finished) return Status::Ok();
  }
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
