// The small CNN (tests/compiler/jobs/cnn.pbtxt: conv2d, batch_norm, max_pool2d,
// global_avg_pool) under parallelism trains to the single-device engine's per-step losses
// within 1e-5 relative over 8 steps (the tolerance argument of
// multi_device_matches_single_device_test.cc holds here too):
// - tp 2 (convolutions split on output channels where the search takes it, batch_norm on
//   channels) and pp 2 against the same job on one device;
// - dp 2 against one device running micro-batches half as large and twice as many: batch_norm
//   normalises each device's part of a micro-batch over itself (PyTorch DDP's semantics,
//   docs/OPS.md), so the data-parallel run equals the single-device run whose micro-batches
//   are those parts (samples 0-3, 4-7, ... in both).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "runtime/host/job_runner.h"

namespace softwire {
namespace {

constexpr int kSteps = 8;
constexpr double kRelativeTolerance = 1e-5;
constexpr char kJob[] = "tests/compiler/jobs/cnn.pbtxt";

struct Parallelism {
  int dp = 1;
  int tp = 1;
  int pp = 1;
};

// Per-step losses of the CNN on dp * tp * pp cpu devices; `micro_batch_size` > 0 overrides the
// job's (with micro-batches per step scaled to keep the step's samples).
std::vector<double> Losses(const Parallelism& parallelism, int64_t micro_batch_size = 0) {
  StatusOr<compiler::JobFile> file = compiler::ParseJobFile(kJob);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return {};
  compiler::CompileOptions options;
  options.steps = kSteps;
  if (micro_batch_size > 0) {
    proto::Training* train = file->job.mutable_train();
    const int64_t samples = train->micro_batch_size() * train->micro_batches_per_step();
    train->set_micro_batch_size(micro_batch_size);
    options.micro_batches_per_step = samples / micro_batch_size;
  }
  const int devices = parallelism.dp * parallelism.tp * parallelism.pp;
  if (devices > 1) {
    StatusOr<proto::Cluster> cluster = placement::LoadClusterSpec(std::to_string(devices) + "cpu");
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    options.cluster = *cluster;
    options.parallel.set_data_parallel(parallelism.dp);
    options.parallel.set_tensor_parallel(parallelism.tp);
    options.parallel.set_pipeline_stages(parallelism.pp);
  }
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return {};
  EXPECT_EQ(plan->device_size(), devices);
  runtime::RunOptions run_options;
  run_options.stall_timeout_seconds = 20;  // A stalled plan fails with a report.
  StatusOr<runtime::RunResult> run = runtime::RunPlan(*plan, run_options);
  EXPECT_TRUE(run.ok()) << run.status();
  std::vector<double> losses;
  if (run.ok()) {
    for (const runtime::StepResult& step : run->steps) losses.push_back(step.loss);
  }
  return losses;
}

void ExpectSameLosses(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));
  for (int step = 0; step < kSteps; ++step) {
    ASSERT_TRUE(std::isfinite(actual[step])) << "step " << step;
    EXPECT_LE(std::abs(actual[step] - expected[step]),
              kRelativeTolerance * std::abs(expected[step]))
        << "step " << step << ": " << actual[step] << " parallel, " << expected[step]
        << " on one device";
  }
}

TEST(CnnParallelism, TensorAndPipelineParallelRunsEqualTheSingleDeviceRun) {
  const std::vector<double> single = Losses({});
  SCOPED_TRACE("tp2");
  ExpectSameLosses(Losses({1, 2, 1}), single);
  SCOPED_TRACE("pp2");
  ExpectSameLosses(Losses({1, 1, 2}), single);
}

TEST(CnnParallelism, DataParallelRunEqualsOneDeviceNormalisingEachDevicesPart) {
  const std::vector<double> single = Losses({}, 4);  // 4 micro-batches of 4 per step.
  ExpectSameLosses(Losses({2, 1, 1}), single);       // 2 micro-batches of 8, split in two.
  // And it differs from one device normalising whole micro-batches of 8: batch_norm's
  // statistics are per device, not synchronised.
  const std::vector<double> whole = Losses({});
  ASSERT_FALSE(whole.empty());
  EXPECT_GT(std::abs(whole[0] - single[0]), 1e-4 * std::abs(whole[0]));
}

}  // namespace
}  // namespace softwire
