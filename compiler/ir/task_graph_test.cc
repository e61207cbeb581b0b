// TaskGraph::Verify on hand-built graphs: producers, readers and inputs agree, with short lists
// (scanned in place) and long ones (over ListCounter::kShort entries, counted in sorted copies),
// and each broken invariant named.
#include "compiler/ir/task_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kPieces = 2;

TaskId AddTask(TaskGraph& graph, const std::string& name) {
  TaskDef task;
  task.name = name;
  task.kind = proto::ACTOR_KIND_COMPUTE;
  task.device = 0;
  task.period = 1;
  task.firings = kPieces;
  task.op_type = "identity";
  return graph.AddTask(std::move(task));
}

RegisterId AddRegister(TaskGraph& graph, TaskId producer, const std::string& name) {
  TaskRegister reg;
  reg.name = name;
  reg.producer = producer;
  reg.device = 0;
  reg.type = TensorType{DType::kFloat32, Shape{4}, Layout::kPlain};
  return graph.AddRegister(std::move(reg));
}

// `fan` producers each write a register that one `pack` task reads (pack's inputs are a long
// list); one `source` register is read by `fan` readers (a long reader list); `fan` of 3 keeps
// every list short.
TaskGraph FanGraph(int fan) {
  TaskGraph graph;
  const TaskId source = AddTask(graph, "source");
  const RegisterId value = AddRegister(graph, source, "value");
  const TaskId pack = AddTask(graph, "pack");
  for (int i = 0; i < fan; ++i) {
    const TaskId part = AddTask(graph, "part" + std::to_string(i));
    graph.AddReader(value, part, 0);
    graph.AddReader(AddRegister(graph, part, "p" + std::to_string(i)), pack, 0);
  }
  AddRegister(graph, pack, "packed");
  return graph;
}

std::string ErrorOf(const TaskGraph& graph) {
  Status status = graph.Verify(kPieces, /*slots_planned=*/false);
  EXPECT_EQ(status.code(), StatusCode::kInternal) << status;
  return status.message();
}

class TaskGraphVerifyTest : public ::testing::TestWithParam<int> {};

TEST_P(TaskGraphVerifyTest, AcceptsAConsistentGraph) {
  const TaskGraph graph = FanGraph(GetParam());
  EXPECT_TRUE(graph.Verify(kPieces, false).ok()) << graph.Verify(kPieces, false);
}

TEST_P(TaskGraphVerifyTest, NamesAReaderThatDoesNotReadTheRegister) {
  TaskGraph graph = FanGraph(GetParam());
  // The last part's register lists pack as its reader, but pack reads 'value' in its place.
  TaskDef& pack = graph.mutable_task(1);
  const RegisterId last = pack.inputs.back();
  pack.inputs.back() = 0;
  EXPECT_THAT(ErrorOf(graph), HasSubstr("register 'p" + std::to_string(GetParam() - 1) +
                                        "': reader 'pack' does not read it once"));
  pack.inputs.back() = last;
  graph.mutable_register(last).readers.push_back({0, 0});  // source never reads it.
  EXPECT_THAT(ErrorOf(graph), HasSubstr("reader 'source' does not read it once"));
}

TEST_P(TaskGraphVerifyTest, NamesATaskReadingARegisterTwice) {
  TaskGraph graph = FanGraph(GetParam());
  TaskDef& pack = graph.mutable_task(1);
  pack.inputs.push_back(pack.inputs.front());
  EXPECT_THAT(ErrorOf(graph), HasSubstr("register 'p0': reader 'pack' does not read it once"));
}

TEST_P(TaskGraphVerifyTest, NamesATaskReadingWithoutBeingAReader) {
  TaskGraph graph = FanGraph(GetParam());
  std::vector<RegisterReader>& readers = graph.mutable_register(0).readers;
  const int64_t fan = GetParam();
  // The last part still reads 'value', which no longer lists it.
  readers.erase(readers.end() - 1);
  EXPECT_THAT(ErrorOf(graph), HasSubstr("task 'part" + std::to_string(fan - 1) +
                                        "': reads 'value' without being its reader"));
}

TEST_P(TaskGraphVerifyTest, NamesATaskListingAnOutputTwice) {
  TaskGraph graph = FanGraph(GetParam());
  TaskDef& pack = graph.mutable_task(1);
  // pack writes as many outputs as the fan (long or short), the first one twice.
  for (int i = 1; i < GetParam(); ++i) AddRegister(graph, 1, "extra" + std::to_string(i));
  graph.mutable_task(1).outputs.push_back(pack.outputs.front());
  EXPECT_THAT(ErrorOf(graph), HasSubstr("task 'pack': lists an output twice"));
}

TEST(TaskGraphAnnotationVersionTest, ChangesWithMutableRegistersAndStructureOnly) {
  TaskGraph graph = FanGraph(3);
  const int64_t start = graph.annotation_version();
  const TaskGraph& read_only = graph;
  EXPECT_EQ(read_only.register_at(0).slots, 0);
  graph.mutable_task(0).estimated_seconds = 1;  // Tasks' annotations: not the registers'.
  EXPECT_EQ(graph.annotation_version(), start);
  graph.mutable_register(0).slots = 2;
  const int64_t after_one = graph.annotation_version();
  EXPECT_GT(after_one, start);
  graph.mutable_registers()[1].slots = 2;
  EXPECT_GT(graph.annotation_version(), after_one);
  const int64_t after_all = graph.annotation_version();
  AddTask(graph, "another");
  EXPECT_GT(graph.annotation_version(), after_all);
}

TEST(TaskGraphInputTypeTest, ReadsTheViewTypeAndLeavesOrderingInputsOut) {
  TaskGraph graph = FanGraph(3);
  TaskDef& pack = graph.mutable_task(1);
  pack.ordering_inputs = 1;  // Its last input is waited for only.
  EXPECT_EQ(graph.KernelInputCount(1), 2u);
  EXPECT_EQ(graph.InputType(1, 1), graph.register_at(pack.inputs[1]).type);
  EXPECT_EQ(graph.InputTypes(1).size(), 2u);
  const TensorType view{DType::kFloat32, Shape{2, 2}, Layout::kPlain};
  pack.input_types = {view, view, view};
  EXPECT_EQ(graph.InputType(1, 0), view);
  EXPECT_EQ(graph.InputTypes(1), (std::vector<TensorType>{view, view}));
}

// The change log: after StartChangeLog, VerifyChanged checks only what was touched, yet finds
// a relation broken from either end, as Verify does.
TEST_P(TaskGraphVerifyTest, VerifyChangedFindsARelationBrokenFromTheUntouchedEnd) {
  TaskGraph graph = FanGraph(GetParam());
  const std::string last = "part" + std::to_string(GetParam() - 1);
  graph.StartChangeLog();
  ASSERT_TRUE(graph.ChangeLogComplete());
  // 'value' forgets its last reader; the part, untouched, still reads it.
  graph.mutable_register(0).readers.pop_back();
  ASSERT_TRUE(graph.ChangeLogComplete());
  Status changed = graph.VerifyChanged(kPieces, false);
  EXPECT_THAT(changed.message(),
              HasSubstr("task '" + last + "': reads 'value' without being its reader"));
  EXPECT_EQ(changed, graph.Verify(kPieces, false));

  graph = FanGraph(GetParam());
  graph.StartChangeLog();
  // pack stops reading its last input; that register, untouched, still lists it.
  graph.mutable_task(1).inputs.pop_back();
  changed = graph.VerifyChanged(kPieces, false);
  EXPECT_THAT(changed.message(), HasSubstr("register 'p" + std::to_string(GetParam() - 1) +
                                           "': reader 'pack' does not read it once"));
  EXPECT_EQ(changed, graph.Verify(kPieces, false));

  graph = FanGraph(GetParam());
  graph.StartChangeLog();
  // p0 names another producer; part0, untouched, still lists it.
  graph.mutable_register(1).producer = 3;
  EXPECT_EQ(graph.VerifyChanged(kPieces, false).code(), StatusCode::kInternal);
  EXPECT_EQ(graph.Verify(kPieces, false).code(), StatusCode::kInternal);
}

TEST_P(TaskGraphVerifyTest, VerifyChangedAcceptsValidChanges) {
  TaskGraph graph = FanGraph(GetParam());
  graph.StartChangeLog();
  const TaskId extra = AddTask(graph, "extra");
  graph.AddReader(AddRegister(graph, extra, "e"), 1, 0);  // pack reads one more.
  graph.AddReader(0, extra, 0);                           // extra reads 'value'.
  graph.mutable_register(0).slots = 3;
  ASSERT_TRUE(graph.ChangeLogComplete());
  EXPECT_TRUE(graph.VerifyChanged(kPieces, false).ok()) << graph.VerifyChanged(kPieces, false);
  EXPECT_TRUE(graph.Verify(kPieces, false).ok());
  // A new task that reads what does not list it is found from the new task's end.
  TaskDef orphan;
  orphan.name = "orphan";
  orphan.kind = proto::ACTOR_KIND_COMPUTE;
  orphan.period = 1;
  orphan.firings = kPieces;
  orphan.inputs = {0};
  graph.AddTask(std::move(orphan));
  EXPECT_THAT(graph.VerifyChanged(kPieces, false).message(),
              HasSubstr("task 'orphan': reads 'value' without being its reader"));
}

TEST(TaskGraphChangeLogTest, EndsAtAChangeOfEverything) {
  TaskGraph graph = FanGraph(3);
  EXPECT_FALSE(graph.ChangeLogComplete());  // Not started.
  graph.StartChangeLog();
  graph.mutable_tasks();
  EXPECT_FALSE(graph.ChangeLogComplete());
  graph.StartChangeLog();
  graph.mutable_registers();
  EXPECT_FALSE(graph.ChangeLogComplete());
  graph.StartChangeLog();
  std::vector<bool> removed(graph.tasks().size(), false);
  graph.RemoveTasks(removed);
  EXPECT_FALSE(graph.ChangeLogComplete());
  // Touching more than the graph holds ends it too (a check of everything is then cheaper).
  graph.StartChangeLog();
  for (size_t i = 0; i < graph.tasks().size() + graph.registers().size() + 4096; ++i) {
    graph.mutable_register(0);
  }
  EXPECT_FALSE(graph.ChangeLogComplete());
}

// 3: every list short; 40: the pack's inputs and outputs and the value's readers are long.
INSTANTIATE_TEST_SUITE_P(ShortAndLongLists, TaskGraphVerifyTest, ::testing::Values(3, 40));

}  // namespace
}  // namespace compiler
}  // namespace softwire
