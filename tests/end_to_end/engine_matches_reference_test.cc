// The foundation's end-to-end check: for an MLP, a 2-layer transformer and a small CNN, the
// per-step losses of the engine (compiled plan, CAF actors, float32 cpu kernels) equal those of a
// plain sequential execution of the same plan in double precision (reference/) within 1e-5
// relative, over 20 steps.
//
// Why 1e-5 is a fair bound: both runs start from bit-identical float32 weights and batches
// (data/ is shared). The engine rounds every op to float32 (unit roundoff 6e-8) and sums
// dot products of up to 784 terms in BLAS order, so one forward pass differs from the
// double result by ~1e-6 relative; SGD/Adam at these learning rates does not amplify that
// over 20 steps. A bug in a kernel, a gradient, the accumulation or the update moves the loss
// by far more (the first step's gradient alone changes the loss by ~1e-2).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "compiler/compiler.h"
#include "reference/interpreter/reference_interpreter.h"
#include "runtime/host/job_runner.h"

namespace softwire {
namespace {

constexpr int kSteps = 20;
constexpr double kRelativeTolerance = 1e-5;

proto::Plan CompileForOneCpu(const std::string& path) {
  StatusOr<compiler::JobFile> job = compiler::ParseJobFile(path);
  EXPECT_TRUE(job.ok()) << job.status();
  compiler::CompileOptions options;
  options.steps = kSteps;
  StatusOr<proto::Plan> plan = compiler::CompileJob(*job, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : proto::Plan();
}

void ExpectEngineMatchesReference(const std::string& job_path) {
  proto::Plan plan = CompileForOneCpu(job_path);
  ASSERT_EQ(plan.schedule().steps(), kSteps);

  StatusOr<runtime::RunResult> engine = runtime::RunPlan(plan, runtime::RunOptions());
  ASSERT_TRUE(engine.ok()) << engine.status();
  StatusOr<reference::ReferenceResult> reference =
      reference::RunReferencePlan(plan, reference::ReferenceOptions());
  ASSERT_TRUE(reference.ok()) << reference.status();

  ASSERT_EQ(engine->steps.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(reference->steps.size(), static_cast<size_t>(kSteps));
  double worst = 0;
  for (int step = 0; step < kSteps; ++step) {
    double expected = reference->steps[step].loss;
    double actual = engine->steps[step].loss;
    ASSERT_TRUE(std::isfinite(actual)) << "step " << step;
    double relative = std::abs(actual - expected) / std::abs(expected);
    worst = std::max(worst, relative);
    EXPECT_LE(relative, kRelativeTolerance)
        << job_path << " step " << step << ": engine " << actual << ", reference " << expected;
  }
  // The job must actually train, or equality would prove little.
  EXPECT_LT(reference->steps.back().loss, reference->steps.front().loss) << job_path;
  char worst_text[32];
  std::snprintf(worst_text, sizeof(worst_text), "%.3e", worst);
  ::testing::Test::RecordProperty("worst_relative_difference", worst_text);
}

TEST(EngineMatchesReferenceTest, MlpLossesEqualTheDoublePrecisionReferenceOverTwentySteps) {
  ExpectEngineMatchesReference("tests/compiler/jobs/mlp.pbtxt");
}

TEST(EngineMatchesReferenceTest, TransformerLossesEqualTheDoublePrecisionReferenceOverTwentySteps) {
  ExpectEngineMatchesReference("tests/compiler/jobs/transformer.pbtxt");
}

// conv2d (oneDNN), batch_norm, max_pool2d, global_avg_pool and their gradients in a job.
TEST(EngineMatchesReferenceTest, CnnLossesEqualTheDoublePrecisionReferenceOverTwentySteps) {
  ExpectEngineMatchesReference("tests/compiler/jobs/cnn.pbtxt");
}

TEST(EngineMatchesReferenceTest, AllocatedMemoryEqualsThePlannedFigure) {
  proto::Plan plan = CompileForOneCpu("tests/compiler/jobs/transformer.pbtxt");
  runtime::RunOptions options;
  options.steps = 1;
  StatusOr<runtime::RunResult> engine = runtime::RunPlan(plan, options);
  ASSERT_TRUE(engine.ok()) << engine.status();
  ASSERT_FALSE(engine->memory.empty());
  for (const runtime::DeviceMemory& memory : engine->memory) {
    EXPECT_EQ(memory.allocated_bytes, memory.planned_bytes) << memory.device;
  }
  EXPECT_GT(engine->memory[0].planned_bytes, 0);
}

}  // namespace
}  // namespace softwire
