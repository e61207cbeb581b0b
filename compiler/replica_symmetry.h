// ReplicaSymmetry: a renaming of a task graph's tasks and registers that keeps everything the
// firing rule reads, and the smaller graph of one representative per orbit that the deadlock
// check simulates instead of the whole (docs/DECISIONS.md, "The deadlock check simulates one
// replica").
//
// A symmetry maps every task to a task and every register to a register, one to one, such that
// a task and its image have the same period, and a register and its image have the same period,
// the same slots, the image of its producer as producer, and the images of its readers, in the
// same phases, as readers (as a multiset). Names, devices, kinds, types and bytes are free to
// differ: the firing rule (slot_simulator.h) reads none of them.
//
// FindReplicaSymmetry proposes one from a device renaming (the data-parallel shift: replica d
// to d + 1 on every stage's mesh) and proves it with VerifySymmetry; a plan whose replicas are
// not identical gets no symmetry, with the first difference as the reason. The proposal may be
// wrong (it is a guess from the logical ops and the graph's edges); the proof is exact and is
// what the deadlock check relies on.
//
// Cost: O(tasks + registers + readers), with one sort of the logical ops' tasks.
// Threading: none; borrows the task graph.
#ifndef SOFTWIRE_COMPILER_REPLICA_SYMMETRY_H_
#define SOFTWIRE_COMPILER_REPLICA_SYMMETRY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/task_graph.h"

namespace softwire {
namespace compiler {

struct TaskGraphSymmetry {
  std::vector<TaskId> task_image;          // Indexed by task id.
  std::vector<RegisterId> register_image;  // Indexed by register id.
};

// Ok when `symmetry` is one (see above); otherwise FailedPrecondition naming the first task or
// register where it is not. O(tasks + registers + readers).
Status VerifySymmetry(const TaskGraph& tasks, const TaskGraphSymmetry& symmetry);

// A symmetry that renames devices by `device_image` (indexed by device id; a permutation):
// every task of a logical op on device d maps to the task of the same op and rank on
// device_image[d] (an op whose devices the renaming does not keep, such as a sink on one
// device, maps to itself), and the tasks and registers between them follow along the edges (a
// task's outputs in order, or rotated when that is what makes their readers agree, as in a ring
// all-reduce's chunks; a register's readers in order). Returns the verified symmetry, or
// nullopt with `*why_not` saying where the replicas differ.
std::optional<TaskGraphSymmetry> FindReplicaSymmetry(const TaskGraph& tasks,
                                                     const std::vector<int>& device_image,
                                                     std::string* why_not);

// The graph of orbits under a symmetry: one task per orbit of tasks (the orbit's lowest id, its
// name, kind, device and period), one register per orbit of registers (likewise, with its
// slots), the representative register read by the representative of each of its readers
// (in the same phase, as often as it has such readers). Simulating it is simulating the whole
// graph in rounds that fire every task of an orbit together (docs/DECISIONS.md).
struct OrbitGraph {
  TaskGraph graph;
  std::vector<int64_t> orbit_size;  // Per task of `graph`: tasks it stands for.
};

// nullopt when a task would read one representative register in both phases (the firing rule
// lets a register have one phase-1 reader and keeps its phase-0 readers apart from it), with
// `*why_not` naming them.
std::optional<OrbitGraph> BuildOrbitGraph(const TaskGraph& tasks, const TaskGraphSymmetry& symmetry,
                                          std::string* why_not);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_REPLICA_SYMMETRY_H_
