// SlotSimulator: the firing rule of docs/PROTOCOL.md run on a TaskGraph, without time, to
// decide whether a plan can make progress with its slots.
//
// Every firing launches and completes at once, lowest task id first. That one greedy run
// decides deadlock freedom for all schedules: an actor that can launch stays able to until it
// launches (its input fills stay held for it, and only it takes slots of its own outputs), so
// firing one actor never disables another, and every maximal run ends in the same state.
//
// Threading: a simulator is used by one thread. It borrows the task graph, which must outlive
// it and stay unchanged.
#ifndef SOFTWIRE_COMPILER_SLOT_SIMULATOR_H_
#define SOFTWIRE_COMPILER_SLOT_SIMULATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/task_graph.h"

namespace softwire {
namespace compiler {

struct SimulationResult {
  bool finished = false;         // Every task fired all its firings.
  int64_t firings = 0;           // Firings that happened.
  int64_t expected_firings = 0;  // Firings a complete run has.
  // For each task that could not finish, in task order: what it waits for, e.g.
  // "actor 'fc2' (firing 3 of 4) waits for a free slot of register 'h2' (1 slot): fill 2 is
  // still held by 'fc2.grad_b'".
  std::vector<std::string> waits;
};

class SlotSimulator {
 public:
  // Simulates `total_pieces` pieces; every task and register period must divide it. The
  // registers must have slots (plan_registers ran).
  SlotSimulator(const TaskGraph& tasks, int64_t total_pieces);

  SimulationResult Run();

 private:
  struct FillState {
    int phase_zero_pending = 0;  // Phase-0 readers that have not released the fill.
    bool phase_one_pending = false;
  };
  struct RegisterState {
    int64_t begun = 0;                  // Fills whose first firing launched.
    int64_t completed = 0;              // Fills whose Ready went out.
    int64_t freed = 0;                  // Fills whose slot came back.
    std::map<int64_t, FillState> live;  // Begun and not freed, by sequence number.
  };

  bool CanFire(TaskId task) const;
  void Fire(TaskId task);
  bool InputAvailable(RegisterId input, int64_t fill, int phase) const;
  void Release(RegisterId input, int64_t fill, int phase);
  void FreeCompletedFills(RegisterId reg);
  std::string DescribeWait(TaskId task) const;
  std::string HoldersOf(RegisterId reg, int64_t fill) const;

  const TaskGraph& tasks_;
  const int64_t total_pieces_;
  std::vector<int64_t> next_firing_;
  std::vector<RegisterState> registers_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_SLOT_SIMULATOR_H_
