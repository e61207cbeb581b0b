// SlotSimulator: the firing rule of docs/PROTOCOL.md run on a TaskGraph, without time, to
// decide whether a plan can make progress with its slots.
//
// Every firing launches and completes at once; a worklist revisits only the actors a firing
// may have enabled (the readers of fills it completed, the producers and phase-1 readers of
// fills it released). That one greedy run decides deadlock freedom for all schedules: an actor
// that can launch stays able to until it launches (its input fills stay held for it, and only
// it takes slots of its own outputs), so firing one actor never disables another, and every
// maximal run ends in the same state. Pipelines (many pieces in flight across stages), phases
// (in-place writers after every reader) and the variable cycle (update -> variable) are all
// just the firing rule here. Cost: O(firings x registers per actor).
//
// Threading: a simulator is used by one thread. It borrows the task graph, which must outlive
// it and stay unchanged.
#ifndef SOFTWIRE_COMPILER_SLOT_SIMULATOR_H_
#define SOFTWIRE_COMPILER_SLOT_SIMULATOR_H_

#include <cstdint>
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
  // When it did not finish: the cycle of actors waiting on each other that keeps it stuck,
  // following each stuck actor to the one it waits for (an input's producer, or a reader still
  // holding an output's slot), e.g. "'fc1' waits for 'g' from 'acc'; 'acc' waits for a slot of
  // 'x' held by 'fc1'". Empty when the walk ends at an actor that is not stuck.
  std::string cycle;
};

class SlotSimulator {
 public:
  // Simulates `total_pieces` pieces; every task and register period must divide it. The
  // registers must have slots (plan_registers ran).
  SlotSimulator(const TaskGraph& tasks, int64_t total_pieces);

  SimulationResult Run();

 private:
  // The task graph in flat arrays, since the firing loop touches them millions of times; and
  // each register's state. Live fills (begun, not freed) occupy slot fill % slots: fills free
  // in order, so at most `slots` consecutive fills are live.
  struct TaskInfo {
    int64_t period = 1;
    int64_t firings = 0;
    int64_t inputs_begin = 0;  // Into inputs_.
    int64_t inputs_end = 0;
    int64_t outputs_begin = 0;  // Into outputs_.
    int64_t outputs_end = 0;
  };
  struct InputInfo {
    RegisterId reg = -1;
    int phase = 0;
  };
  struct RegisterState {
    int64_t period = 1;
    int slots = 1;
    TaskId producer = -1;
    int64_t readers_begin = 0;  // Phase-0 readers, into readers_.
    int64_t readers_end = 0;
    TaskId phase_one_reader = -1;
    int64_t pending_begin = 0;  // `slots` entries of pending_zero_ and pending_one_.
    int64_t begun = 0;          // Fills whose first firing launched.
    int64_t completed = 0;      // Fills whose Ready went out.
    int64_t freed = 0;          // Fills whose slot came back.
  };

  bool CanFire(TaskId task);
  void Fire(TaskId task);
  bool InputAvailable(RegisterId input, int64_t fill, int phase) const;
  void Release(RegisterId input, int64_t fill, int phase);
  void FreeCompletedFills(RegisterId reg);
  void Schedule(TaskId task);
  std::string DescribeWait(TaskId task) const;
  // The stuck actor `task` waits for, with a clause saying why; -1 when none.
  TaskId WaitsFor(TaskId task, std::string* why) const;
  std::string DescribeCycle() const;
  std::string HoldersOf(RegisterId reg, int64_t fill) const;
  int PhaseOf(TaskId task, size_t input) const;

  const TaskGraph& tasks_;
  const int64_t total_pieces_;
  std::vector<TaskInfo> task_info_;
  std::vector<InputInfo> inputs_;
  std::vector<RegisterId> outputs_;
  std::vector<TaskId> readers_;
  std::vector<RegisterState> registers_;
  std::vector<int> pending_zero_;  // Per live slot: phase-0 readers yet to release.
  std::vector<char> pending_one_;  // Per live slot: the phase-1 reader has not released.
  std::vector<int64_t> next_firing_;
  // Per task: inputs before this index were available at the last check of its next firing and
  // stay so until it fires (fills stay complete and held for it), so checks resume here; a task
  // reading hundreds of registers is then not rescanned whole each time one arrives.
  std::vector<int64_t> checked_inputs_;
  std::vector<TaskId> worklist_;  // A stack; order does not change the outcome.
  std::vector<char> scheduled_;
};

}  // namespace compiler
}  // namespace softwire

#endif  // SOFTWIRE_COMPILER_SLOT_SIMULATOR_H_
