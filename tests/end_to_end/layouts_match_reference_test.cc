// Layouts chosen by the compiler (docs/LAYOUTS.md) on the engine: the small CNN
// (tests/compiler/jobs/cnn.pbtxt) and a small ResNet (resnet_tiny.pbtxt) compiled with
// `--layouts` nhwc, nChw16c and auto train to the per-step losses of the double-precision
// reference interpreter running the same plan (which holds every tensor in NCHW order whatever
// its layout) within 1e-5 relative over 10 steps, the bound and argument of
// engine_matches_reference_test.cc: a kernel that misreads a layout moves the loss by percents.
// With layouts on, pp 2 trains to the single-device engine's losses, and dp 2 to one device
// running micro-batches half as large (batch_norm normalises each device's part, as in
// cnn_parallel_matches_single_device_test.cc), within the same 1e-5.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "reference/interpreter/reference_interpreter.h"
#include "runtime/host/job_runner.h"

namespace softwire {
namespace {

constexpr int kSteps = 10;
constexpr double kRelativeTolerance = 1e-5;

struct Setup {
  std::string layouts = "auto";
  int dp = 1;
  int pp = 1;
  int64_t micro_batch_size = 0;  // > 0: the job's, with micro-batches scaled to keep a step.
};

proto::Plan Compile(const std::string& job, const Setup& setup) {
  StatusOr<compiler::JobFile> file =
      compiler::ParseJobFile("tests/compiler/jobs/" + job + ".pbtxt");
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return {};
  compiler::CompileOptions options;
  options.steps = kSteps;
  options.layouts = setup.layouts;
  if (setup.micro_batch_size > 0) {
    proto::Training* train = file->job.mutable_train();
    const int64_t samples = train->micro_batch_size() * train->micro_batches_per_step();
    train->set_micro_batch_size(setup.micro_batch_size);
    options.micro_batches_per_step = samples / setup.micro_batch_size;
  }
  const int devices = setup.dp * setup.pp;
  if (devices > 1) {
    StatusOr<proto::Cluster> cluster = placement::LoadClusterSpec(std::to_string(devices) + "cpu");
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    options.cluster = *cluster;
    options.parallel.set_data_parallel(setup.dp);
    options.parallel.set_pipeline_stages(setup.pp);
  }
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : proto::Plan();
}

int LaidOutRegisters(const proto::Plan& plan) {
  int count = 0;
  for (const proto::RegisterDef& reg : plan.register_def()) {
    count += reg.tensor().layout() != proto::LAYOUT_PLAIN ? 1 : 0;
  }
  return count;
}

std::vector<double> EngineLosses(const proto::Plan& plan) {
  runtime::RunOptions options;
  options.stall_timeout_seconds = 20;
  StatusOr<runtime::RunResult> run = runtime::RunPlan(plan, options);
  EXPECT_TRUE(run.ok()) << run.status();
  std::vector<double> losses;
  if (run.ok()) {
    for (const runtime::StepResult& step : run->steps) losses.push_back(step.loss);
  }
  return losses;
}

void ExpectSameLosses(const std::vector<double>& actual, const std::vector<double>& expected,
                      const std::string& what) {
  ASSERT_EQ(actual.size(), static_cast<size_t>(kSteps)) << what;
  ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps)) << what;
  for (int step = 0; step < kSteps; ++step) {
    ASSERT_TRUE(std::isfinite(actual[step])) << what << " step " << step;
    EXPECT_LE(std::abs(actual[step] - expected[step]),
              kRelativeTolerance * std::abs(expected[step]))
        << what << " step " << step << ": " << actual[step] << " against " << expected[step];
  }
  EXPECT_NE(expected.front(), expected.back()) << what << " does not train";
}

class LayoutsMatchReference
    : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(LayoutsMatchReference, EngineLossesEqualTheReferences) {
  const auto& [job, layouts] = GetParam();
  const proto::Plan plan = Compile(job, {layouts});
  if (layouts != "auto") {
    EXPECT_GT(LaidOutRegisters(plan), 0);
  }
  StatusOr<reference::ReferenceResult> reference =
      reference::RunReferencePlan(plan, reference::ReferenceOptions());
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<double> expected;
  for (const reference::ReferenceStep& step : reference->steps) expected.push_back(step.loss);
  ExpectSameLosses(EngineLosses(plan), expected, job + " --layouts " + layouts);
}

INSTANTIATE_TEST_SUITE_P(
    CnnAndResNet, LayoutsMatchReference,
    ::testing::Combine(::testing::Values("cnn", "resnet_tiny"),
                       ::testing::Values("auto", "nhwc", "nChw16c")),
    [](const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param);
    });

TEST(LayoutsUnderParallelism, PipelineAndDataParallelRunsEqualTheSingleDeviceRun) {
  for (const char* layouts : {"auto", "nhwc"}) {
    SCOPED_TRACE(layouts);
    const proto::Plan one = Compile("resnet_tiny", {layouts});
    EXPECT_GT(LaidOutRegisters(one), 0);
    ExpectSameLosses(EngineLosses(Compile("resnet_tiny", {layouts, 1, 2})), EngineLosses(one),
                     "pp2");
    ExpectSameLosses(EngineLosses(Compile("resnet_tiny", {layouts, 2, 1})),
                     EngineLosses(Compile("resnet_tiny", {layouts, 1, 1, 4})), "dp2");
  }
}

}  // namespace
}  // namespace softwire
