// The pass wrapper: order, verification after each pass, dumps, timings.
#include "compiler/pass_manager.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "base/file.h"
#include "compiler/passes/passes.h"
#include "compiler/testing/compiler_test_util.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

const char kJob[] = R"(
  name: "tiny"
  source {
    name: "data"
    output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 4 }
    synthetic { seed: 1 }
  }
  op { name: "act" type: "relu" input: "x" output: "y" }
  op { name: "total" type: "reduce_sum" input: "y" output: "s" }
  metric: "s"
  steps: 2
  micro_batch_size: 3
)";

class PassManagerTest : public ::testing::Test {
 protected:
  PassManagerTest() : job_(*ParseJobText(kJob, "tiny.pbtxt", ".")), registry_(MakeStandardOps()) {
    options_.cluster = OneCpuCluster();
  }

  JobFile job_;
  CompileOptions options_;
  OpRegistry registry_;
};

Status BreakTheGraph(Compilation& compilation) {
  compilation.graph.mutable_tensor(0).producer = -1;
  return Status::Ok();
}

// A late pass that changes a register's annotations only (no structural change).
Status ZeroTheFirstRegistersSlots(Compilation& compilation) {
  compilation.tasks.mutable_register(0).slots = 0;
  return Status::Ok();
}

Status FailOnPurpose(Compilation&) {
  return InvalidArgumentError("bad input, on purpose");
}

TEST_F(PassManagerTest, RunsTheStandardPassesAndEmitsAPlan) {
  Compilation compilation(job_, options_, registry_);
  std::vector<PassTiming> timings;
  ASSERT_TRUE(PassManager(StandardPasses()).Run(compilation, &timings).ok());
  ASSERT_TRUE(compilation.plan.has_value());
  ASSERT_EQ(timings.size(), StandardPasses().size());
  EXPECT_EQ(timings.front().name, "resolve_schedule");
  EXPECT_EQ(timings.back().name, "meet_budget");
  double cpu = 0;
  for (const PassTiming& timing : timings) {
    EXPECT_GE(timing.cpu_milliseconds, 0) << timing.name;
    EXPECT_GE(timing.verify_cpu_milliseconds, 0) << timing.name;
    cpu += timing.cpu_milliseconds + timing.verify_cpu_milliseconds;
  }
  EXPECT_GT(cpu, 0);
}

TEST_F(PassManagerTest, ReportsAPassThatBreaksAnInvariantAsInternalNamingIt) {
  Compilation compilation(job_, options_, registry_);
  std::vector<Pass> passes = {{"resolve_schedule", ResolveSchedulePass},
                              {"resolve_cluster", ResolveClusterPass},
                              {"build_graph", BuildGraphPass},
                              {"break_the_graph", BreakTheGraph}};
  Status status = PassManager(passes).Run(compilation);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("after pass 'break_the_graph': "));
  EXPECT_THAT(status.message(), HasSubstr("tensor 'x' has no producer"));
}

// Registers' annotations are re-checked only after a pass that may have changed one
// (TaskGraph::annotation_version): one that did, after passes that did not, is still caught.
TEST_F(PassManagerTest, ReportsAPassThatBreaksARegistersSlotsAfterPassesThatOnlyRead) {
  Compilation compilation(job_, options_, registry_);
  std::vector<Pass> passes;
  for (const Pass& pass : StandardPasses()) {
    passes.push_back(pass);
    if (pass.name == "check_deadlock") break;
  }
  passes.push_back({"zero_slots", ZeroTheFirstRegistersSlots});
  Status status = PassManager(passes).Run(compilation);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("after pass 'zero_slots': "));
  EXPECT_THAT(status.message(), HasSubstr("fewer than one slot"));
}

TEST_F(PassManagerTest, StopsAtTheFirstFailingPassAndReturnsItsError) {
  Compilation compilation(job_, options_, registry_);
  std::vector<PassTiming> timings;
  Status status = PassManager({{"resolve_schedule", ResolveSchedulePass},
                               {"fail", FailOnPurpose},
                               {"build_graph", BuildGraphPass}})
                      .Run(compilation, &timings);
  EXPECT_EQ(status, InvalidArgumentError("bad input, on purpose"));
  EXPECT_EQ(timings.size(), 1u);
  EXPECT_EQ(compilation.graph.op_count(), 0);
}

TEST_F(PassManagerTest, DumpsTheGraphAfterTheNamedPass) {
  // Per process, so test runs of several build trees do not share it.
  std::string directory = ::testing::TempDir() + "/pass_manager_dump_" + std::to_string(::getpid());
  std::filesystem::remove_all(directory);
  options_.dump_after = {"infer_shapes", "plan_memory"};
  options_.dump_directory = directory;
  Compilation compilation(job_, options_, registry_);
  ASSERT_TRUE(PassManager(StandardPasses()).Run(compilation).ok());
  StatusOr<std::string> shapes = ReadFile(directory + "/05-infer_shapes.txt");
  ASSERT_TRUE(shapes.ok()) << shapes.status();
  EXPECT_THAT(*shapes, HasSubstr("op 1 'act' = relu(x: float32[3, 4]) -> (y: float32[3, 4])"));
  EXPECT_THAT(*shapes, ::testing::Not(HasSubstr("# task graph")));
  // NN is the pass's 1-based position in StandardPasses(), which grows as passes are added.
  const std::vector<Pass> passes = StandardPasses();
  int position = 0;
  while (position < static_cast<int>(passes.size()) && passes[position].name != "plan_memory") {
    ++position;
  }
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%02d", position + 1);
  StatusOr<std::string> memory = ReadFile(directory + "/" + prefix + "-plan_memory.txt");
  ASSERT_TRUE(memory.ok()) << memory.status();
  EXPECT_THAT(*memory, HasSubstr("register 0 'x' float32[3, 4] producer 0 period 1 readers [1] "
                                 "slots 1 x 64 B at 0"));
  std::filesystem::remove_all(directory);
}

TEST_F(PassManagerTest, LogsEachPassWithItsDurationWhenAsked) {
  options_.log_passes = true;
  Compilation compilation(job_, options_, registry_);
  ::testing::internal::CaptureStderr();
  Status status = PassManager(StandardPasses()).Run(compilation);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_THAT(log, ::testing::ContainsRegex("pass resolve_schedule: [0-9]+\\.[0-9]{3} ms\n"));
  EXPECT_THAT(log, ::testing::ContainsRegex("pass meet_budget: [0-9]+\\.[0-9]{3} ms\n$"));
}

TEST_F(PassManagerTest, RejectsADumpOfAPassThatDoesNotExist) {
  options_.dump_after = {"infer_shape"};
  options_.dump_directory = ::testing::TempDir();
  Compilation compilation(job_, options_, registry_);
  Status status = PassManager(StandardPasses()).Run(compilation);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("dump_after names unknown pass 'infer_shape'"));
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
