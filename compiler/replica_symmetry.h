// ReplicaSymmetry: which tasks and registers of one data-parallel replica correspond to which of
// the next, and the smaller graph of one task per chain of corresponding tasks that the deadlock
// check simulates instead of the whole (docs/DECISIONS.md, "The deadlock check simulates one
// replica").
//
// A correspondence is a partial renaming: a task (register) maps to at most one task (register)
// and is the image of at most one, with the same period; a register maps only where its
// producer maps to the image's producer; following the map from any element gives a chain that
// is a cycle of exactly `replicas` elements or a path of at most `replicas`. The tail (tasks
// that only consume what the replicas make, such as a sink on one device and the copies that
// gather its values) maps nowhere, reads the replicas in phase 0 only, and has registers only
// it reads. Nothing else is required: names, devices, kinds, slots and readers may differ, and
// an empty correspondence is valid (its orbit graph is the plan itself).
//
// The orbit graph of a correspondence is the quotient of a plan G- that contains the plan, is at
// least as strict (every task, register and edge of the plan, more edges, fewer slots) and is
// symmetric under the shift of replicas; so when the orbit graph's simulation finishes, the plan
// finishes (the proof is in docs/DECISIONS.md). When it does not, the plan must be simulated
// whole.
//
// Cost: O(tasks + registers + readers), with one sort of the logical ops' tasks and one of each
// register chain's readers. Threading: none; borrows the task graph.
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
  std::vector<TaskId> task_image;          // Indexed by task id; -1: none.
  std::vector<RegisterId> register_image;  // Indexed by register id; -1: none.
  std::vector<char> tail;                  // Indexed by task id.
};

// Ok when `symmetry` is a correspondence for `replicas` replicas (see above); otherwise
// FailedPrecondition naming the first task or register where it is not.
Status VerifySymmetry(const TaskGraph& tasks, const TaskGraphSymmetry& symmetry, int64_t replicas);

// A correspondence that follows the renaming of devices `device_image` (indexed by device id; a
// permutation of order `replicas`, such as replica d to d + 1 on every stage's mesh): the k-th
// task of a logical op on device d maps to the k-th of that op on device_image[d] when the op
// has as many tasks on each; the tasks and registers between them follow along the edges (a
// task's outputs in order, or rotated where that makes all their readers correspond, as in a
// ring all-reduce's chunks; a register's readers when they are of the same kind and op on the
// image's device); whatever does not fit is left out. Verified; nullopt with `*why_not` only
// when a task has no device.
std::optional<TaskGraphSymmetry> FindReplicaSymmetry(const TaskGraph& tasks,
                                                     const std::vector<int>& device_image,
                                                     int64_t replicas, std::string* why_not);

// Per element: its chain's index among all chains, and its position in the chain (a cycle's
// lowest id is at 0; a path's first element is at 0). Chains are numbered in the order their
// first element is visited: paths from their heads, then cycles.
struct Chains {
  std::vector<int64_t> chain;
  std::vector<int64_t> position;
  int64_t count = 0;
};
// The chains of the partial map `image` (a correspondence's task_image or register_image);
// elements marked in `excluded` (may be null) are in none.
Chains ChainsOf(const std::vector<int64_t>& image, const std::vector<char>* excluded);

// The orbit graph: one task per chain of corresponding tasks (the first member's kind, device
// and period; no name) and per tail task; one register per chain of corresponding registers
// (the fewest slots of the chain; no name) and per tail register; a chain's register read by a
// chain's task once per (reader chain, offset of positions, phase), as often as the most any member
// is read so.
struct OrbitGraph {
  TaskGraph graph;
  std::vector<int64_t> orbit_size;         // Per task of `graph`: tasks of the plan it stands for.
  std::vector<TaskId> first_task;          // Per task of `graph`: the first it stands for.
  std::vector<RegisterId> first_register;  // Per register of `graph`: likewise.
};

// nullopt, with `*why_not`, when a register of the orbit graph would have two in-place (phase-1)
// readers or one task reading it in both phases, which the firing rule does not allow.
std::optional<OrbitGraph> BuildOrbitGraph(const TaskGraph& tasks, const TaskGraphSymmetry& symmetry,
                                          int64_t replicas, std::string* why_not);

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_REPLICA_SYMMETRY_H_
