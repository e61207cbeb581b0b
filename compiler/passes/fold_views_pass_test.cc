// fold_views on hand-built task graphs: a flat_split whose chunks only transfers and boxing
// tasks read becomes range views of its input (each reader reads its chunk where it lies, the
// split and its chunk registers go, view_bytes counts them); a split one of whose chunks a
// compute task reads stays a copy.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/compilation.h"
#include "compiler/ops/op_registry.h"
#include "compiler/passes/passes.h"

namespace softwire {
namespace compiler {
namespace {

TensorType Floats(int64_t elements) {
  return TensorType{DType::kFloat32, Shape({elements})};
}

class FoldSplitTest : public ::testing::Test {
 protected:
  FoldSplitTest() : registry_(MakeStandardOps()), compilation_(job_file_, options_, registry_) {}

  TaskId AddTask(const std::string& name, proto::ActorKind kind, const std::string& op, int device,
                 const std::vector<RegisterId>& inputs, const std::vector<TensorType>& outputs,
                 AttributeMap attributes = {}) {
    TaskGraph& tasks = compilation_.tasks;
    TaskDef task;
    task.name = name;
    task.kind = kind;
    task.device = device;
    task.period = 1;
    task.firings = 1;
    task.op_type = op;
    task.attributes = std::move(attributes);
    const TaskId id = tasks.AddTask(std::move(task));
    for (RegisterId input : inputs) tasks.AddReader(input, id, 0);
    for (size_t k = 0; k < outputs.size(); ++k) {
      TaskRegister reg;
      reg.name = name + "." + std::to_string(k);
      reg.producer = id;
      reg.device = device;
      reg.type = outputs[k];
      reg.period = 1;
      tasks.AddRegister(std::move(reg));
    }
    return id;
  }

  RegisterId Output(TaskId task, size_t k = 0) const {
    return compilation_.tasks.task(task).outputs[k];
  }

  // g (24 floats) split into 8 + 16 on device 0: chunk 0 copied to device 1, chunk 1 added to
  // `other` by a boxing add, or read by a relu (compute) when `compute_reader`.
  void BuildRing(bool compute_reader) {
    const TaskId fill = AddTask("g", proto::ACTOR_KIND_BOXING, "fill", 0, {}, {Floats(24)});
    const TaskId other = AddTask("other", proto::ACTOR_KIND_BOXING, "fill", 0, {}, {Floats(16)});
    AttributeMap sizes;
    sizes.Set("sizes", std::vector<int64_t>{8, 16});
    split_ = AddTask("split", proto::ACTOR_KIND_BOXING, "flat_split", 0, {Output(fill)},
                     {Floats(8), Floats(16)}, sizes);
    copy_ = AddTask("copy", proto::ACTOR_KIND_COPY, "copy", 1, {Output(split_, 0)}, {Floats(8)});
    if (compute_reader) {
      add_ =
          AddTask("relu", proto::ACTOR_KIND_COMPUTE, "relu", 0, {Output(split_, 1)}, {Floats(16)});
    } else {
      add_ = AddTask("add", proto::ACTOR_KIND_BOXING, "add", 0, {Output(other), Output(split_, 1)},
                     {Floats(16)});
    }
    g_ = Output(fill);
  }

  const TaskDef* Named(const std::string& name) const {
    for (const TaskDef& task : compilation_.tasks.tasks()) {
      if (task.name == name) return &task;
    }
    return nullptr;
  }

  JobFile job_file_;
  CompileOptions options_;
  OpRegistry registry_;
  Compilation compilation_;
  TaskId split_ = -1;
  TaskId copy_ = -1;
  TaskId add_ = -1;
  RegisterId g_ = -1;
};

TEST_F(FoldSplitTest, ASplitReadOnlyByTransfersAndBoxingBecomesRangesOfItsInput) {
  BuildRing(/*compute_reader=*/false);
  ASSERT_TRUE(FoldViewsPass(compilation_).ok());
  const TaskGraph& tasks = compilation_.tasks;
  EXPECT_EQ(Named("split"), nullptr);
  const TaskDef* copy = Named("copy");
  const TaskDef* add = Named("add");
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(add, nullptr);
  const RegisterId g = Named("g")->outputs[0];
  // The copy reads bytes [0, 32) of g, the add's second input bytes [32, 96).
  EXPECT_EQ(copy->inputs, std::vector<RegisterId>{g});
  EXPECT_EQ(tasks.InputOffset(copy->id, 0), 0);
  EXPECT_EQ(tasks.InputType(copy->id, 0), Floats(8));
  EXPECT_EQ(add->inputs[1], g);
  EXPECT_EQ(tasks.InputOffset(add->id, 0), 0);
  EXPECT_EQ(tasks.InputOffset(add->id, 1), 32);
  EXPECT_EQ(tasks.InputType(add->id, 1), Floats(16));
  EXPECT_EQ(tasks.register_at(g).readers.size(), 2u);
  // One 64-byte-aligned fill of each chunk register: 64 + 64.
  EXPECT_EQ(compilation_.view_bytes[0], 128);
  const Status verified = tasks.Verify(/*total_pieces=*/1, /*slots_planned=*/false);
  EXPECT_TRUE(verified.ok()) << verified;
}

TEST_F(FoldSplitTest, ASplitAComputeTaskReadsStaysACopy) {
  BuildRing(/*compute_reader=*/true);
  ASSERT_TRUE(FoldViewsPass(compilation_).ok());
  ASSERT_NE(Named("split"), nullptr);
  const TaskDef* copy = Named("copy");
  EXPECT_EQ(copy->inputs[0], Named("split")->outputs[0]);
  EXPECT_TRUE(copy->input_offsets.empty());
  EXPECT_TRUE(compilation_.view_bytes.empty());
}

TEST_F(FoldSplitTest, NoSplitIsFoldedWithoutViews) {
  options_.fold_views = false;
  BuildRing(/*compute_reader=*/false);
  ASSERT_TRUE(FoldViewsPass(compilation_).ok());
  EXPECT_NE(Named("split"), nullptr);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
