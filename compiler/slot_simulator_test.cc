// The untimed firing-rule simulation that check_deadlock relies on, on hand-built task graphs.
#include "compiler/slot_simulator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/passes/passes.h"
#include "compiler/testing/compiler_test_util.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Builds task graphs in a few words. Every register holds a float32[4].
class Tasks {
 public:
  explicit Tasks(int64_t total_pieces) : total_pieces_(total_pieces) {}

  TaskId Add(const std::string& name, proto::ActorKind kind, int64_t period) {
    TaskDef task;
    task.name = name;
    task.kind = kind;
    task.device = 0;
    task.period = period;
    task.firings = total_pieces_ / period;
    task.op_type = "identity";
    return graph.AddTask(task);
  }
  RegisterId Write(TaskId producer, const std::string& name, int64_t period, int slots) {
    TaskRegister reg;
    reg.name = name;
    reg.producer = producer;
    reg.device = 0;
    reg.type = F32({4});
    reg.period = period;
    reg.slots = slots;
    reg.bytes_per_slot = 64;
    return graph.AddRegister(reg);
  }
  void Read(RegisterId reg, TaskId reader, int phase = 0) { graph.AddReader(reg, reader, phase); }

  SimulationResult Simulate() const { return SlotSimulator(graph, total_pieces_).Run(); }

  TaskGraph graph;

 private:
  int64_t total_pieces_;
};

TEST(SlotSimulator, RunsAPipelineWithOneSlotPerRegisterToTheEnd) {
  Tasks tasks(6);
  TaskId source = tasks.Add("source", proto::ACTOR_KIND_SOURCE, 1);
  TaskId relu = tasks.Add("relu", proto::ACTOR_KIND_COMPUTE, 1);
  TaskId sink = tasks.Add("sink", proto::ACTOR_KIND_SINK, 1);
  tasks.Read(tasks.Write(source, "x", 1, 2), relu);
  tasks.Read(tasks.Write(relu, "y", 1, 1), sink);
  ASSERT_TRUE(tasks.graph.Verify(6, true).ok());
  SimulationResult result = tasks.Simulate();
  EXPECT_TRUE(result.finished);
  EXPECT_EQ(result.firings, 18);
  EXPECT_TRUE(result.waits.empty());
}

// variable -> forward -> accumulate -> update, which writes the variable in place (phase 1).
TEST(SlotSimulator, AcceptsTheTrainingCycleThroughTheVariablesPhases) {
  const int64_t per_step = 3;
  Tasks tasks(2 * per_step);
  TaskId source = tasks.Add("source", proto::ACTOR_KIND_SOURCE, 1);
  TaskId variable = tasks.Add("w", proto::ACTOR_KIND_VARIABLE, per_step);
  TaskId forward = tasks.Add("forward", proto::ACTOR_KIND_COMPUTE, 1);
  TaskId accumulate = tasks.Add("accumulate", proto::ACTOR_KIND_ACCUMULATE, 1);
  TaskId update = tasks.Add("update", proto::ACTOR_KIND_UPDATE, per_step);
  RegisterId w = tasks.Write(variable, "w", per_step, 1);
  tasks.Read(tasks.Write(source, "x", 1, 2), forward);
  tasks.Read(w, forward);
  tasks.Read(tasks.Write(forward, "g", 1, 1), accumulate);
  tasks.Read(tasks.Write(accumulate, "g_sum", per_step, 1), update);
  tasks.Read(w, update, 1);
  ASSERT_TRUE(tasks.graph.Verify(2 * per_step, true).ok());
  SimulationResult result = tasks.Simulate();
  EXPECT_TRUE(result.finished) << ::testing::PrintToString(result.waits);
  EXPECT_EQ(result.firings, 6 + 2 + 6 + 6 + 2);
}

// y = f(x) per piece; z reads y and the step's sum of y. z waits for the sum, which needs piece
// 1 of y, which needs y's only slot, which z holds: a deadlock for any steps > 0.
Tasks PerStepSumReadBesidePerPieceValue(int y_slots) {
  Tasks tasks(4);
  TaskId source = tasks.Add("source", proto::ACTOR_KIND_SOURCE, 1);
  TaskId y = tasks.Add("f", proto::ACTOR_KIND_COMPUTE, 1);
  TaskId sum = tasks.Add("sum", proto::ACTOR_KIND_ACCUMULATE, 1);
  TaskId z = tasks.Add("z", proto::ACTOR_KIND_COMPUTE, 1);
  tasks.Read(tasks.Write(source, "x", 1, 2), y);
  RegisterId y_out = tasks.Write(y, "y", 1, y_slots);
  tasks.Read(y_out, sum);
  tasks.Read(tasks.Write(sum, "y_sum", 2, 1), z);
  tasks.Read(y_out, z);
  return tasks;
}

TEST(SlotSimulator, FindsADeadlockAndSaysWhatEachStuckActorWaitsFor) {
  SimulationResult result = PerStepSumReadBesidePerPieceValue(1).Simulate();
  EXPECT_FALSE(result.finished);
  EXPECT_THAT(result.waits,
              ElementsAre("actor 'source' (firing 3 of 4) waits for a free slot of register 'x' "
                          "(2 slots): fill 1 is still held by 'f'",
                          "actor 'f' (firing 1 of 4) waits for a free slot of register 'y' (1 "
                          "slot): fill 0 is still held by 'z'",
                          "actor 'sum' (firing 1 of 4) waits for fill 1 of register 'y' from 'f'",
                          "actor 'z' (firing 0 of 4) waits for fill 0 of register 'y_sum' from "
                          "'sum'"));
}

TEST(SlotSimulator, NamesTheCycleOfActorsWaitingOnEachOther) {
  SimulationResult result = PerStepSumReadBesidePerPieceValue(1).Simulate();
  EXPECT_EQ(result.cycle,
            "'f' waits for a slot of 'y' held by 'z'; 'z' waits for 'y_sum' from 'sum'; 'sum' "
            "waits for 'y' from 'f'");
}

TEST(SlotSimulator, AnotherSlotResolvesThatDeadlock) {
  EXPECT_TRUE(PerStepSumReadBesidePerPieceValue(2).Simulate().finished);
}

TEST(SlotSimulator, NeverBlocksOnARegisterNobodyReads) {
  Tasks tasks(3);
  TaskId source = tasks.Add("source", proto::ACTOR_KIND_SOURCE, 1);
  tasks.Write(source, "unread", 1, 1);
  EXPECT_TRUE(tasks.Simulate().finished);
}

TEST(CheckDeadlockPass, FailsWithFailedPreconditionNamingTheStuckActors) {
  JobFile job_file;
  CompileOptions options;
  OpRegistry registry = MakeStandardOps();
  Compilation compilation(job_file, options, registry);
  compilation.schedule = {true, 5, 1, 2};
  compilation.tasks = PerStepSumReadBesidePerPieceValue(1).graph;
  Status status = CheckDeadlockPass(compilation);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("the plan would deadlock: after 5 of 16 firings (2 "
                                          "steps) no actor can fire"));
  EXPECT_THAT(status.message(), HasSubstr("actor 'z' (firing 0 of 4) waits for fill 0 of "
                                          "register 'y_sum' from 'sum'"));
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
