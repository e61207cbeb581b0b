// Parallelism changes no result on the CAF runtime: the MLP and the 2-layer transformer
// compiled for several cpu devices with data, tensor and pipeline parallelism (dp 2, dp 4, tp 2,
// pp 2, pp 4, dp 2 x pp 2, dp 2 x tp 2) train to the per-step losses of the single-device
// engine run within 1e-5 relative over 10 steps; and the reference interpreter, running a
// multi-device plan sequentially in double precision, computes the single-device plan's losses.
//
// Why 1e-5 is fair: every run starts from bit-identical weights and batches (data/ is
// counter-based, so a device's slice of a variable or a batch holds the values the whole would).
// What differs is the order of float32 sums: a matmul split on its inner axis adds partial
// products across devices, gradients are summed over a ring, a split batch's mean is a sum of
// partial means. Each reorders roundings of ~6e-8 relative; one step's loss moves by ~1e-7 and
// SGD/Adam at these rates do not amplify it over 10 steps (the single-device engine itself stays
// within 1.3e-7 of double precision over 20, engine_matches_reference_test). A wiring mistake (a
// lost or doubled partial term, a wrong slice) moves the loss by percents.
//
// Cheap on purpose (a 2-core CI): these jobs are small, micro-batches stay as the jobs give them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "compiler/compiler.h"
#include "placement/cluster_spec.h"
#include "reference/interpreter/reference_interpreter.h"
#include "runtime/host/job_runner.h"

namespace softwire {
namespace {

constexpr int kSteps = 10;
constexpr double kRelativeTolerance = 1e-5;

struct Setting {
  const char* name;
  int dp;
  int tp;
  int pp;
  int devices() const { return dp * tp * pp; }
};

void PrintTo(const Setting& setting, std::ostream* out) {
  *out << setting.name;
}

const Setting kSettings[] = {{"dp2", 2, 1, 1},    {"dp4", 4, 1, 1}, {"tp2", 1, 2, 1},
                             {"pp2", 1, 1, 2},    {"pp4", 1, 1, 4}, {"dp2_pp2", 2, 1, 2},
                             {"dp2_tp2", 2, 2, 1}};

std::string JobPath(const std::string& job) {
  return "tests/compiler/jobs/" + job + ".pbtxt";
}

// The job compiled for `setting` on a cluster of that many cpu devices ("4cpu": they share
// this machine's cores), or for one cpu device when setting is null.
proto::Plan Compile(const std::string& job, const Setting* setting, int steps) {
  StatusOr<compiler::JobFile> file = compiler::ParseJobFile(JobPath(job));
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return proto::Plan();
  compiler::CompileOptions options;
  options.steps = steps;
  if (setting != nullptr) {
    StatusOr<proto::Cluster> cluster =
        placement::LoadClusterSpec(std::to_string(setting->devices()) + "cpu");
    EXPECT_TRUE(cluster.ok()) << cluster.status();
    options.cluster = *cluster;
    options.parallel.set_data_parallel(setting->dp);
    options.parallel.set_tensor_parallel(setting->tp);
    options.parallel.set_pipeline_stages(setting->pp);
  }
  StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
  EXPECT_TRUE(plan.ok()) << job << ": " << plan.status();
  return plan.ok() ? *plan : proto::Plan();
}

runtime::RunOptions BoundedRun() {
  runtime::RunOptions options;
  options.stall_timeout_seconds = 20;  // A stalled plan fails with a report instead of hanging.
  return options;
}

// Per-step losses of the single-device engine run, computed once per job.
const std::vector<double>& SingleDeviceLosses(const std::string& job) {
  static std::map<std::string, std::vector<double>>* cache =
      new std::map<std::string, std::vector<double>>();
  auto found = cache->find(job);
  if (found != cache->end()) return found->second;
  std::vector<double>& losses = (*cache)[job];
  StatusOr<runtime::RunResult> run = runtime::RunPlan(Compile(job, nullptr, kSteps), BoundedRun());
  EXPECT_TRUE(run.ok()) << run.status();
  if (run.ok()) {
    for (const runtime::StepResult& step : run->steps) losses.push_back(step.loss);
  }
  return losses;
}

class MultiDeviceEngine : public ::testing::TestWithParam<std::tuple<std::string, Setting>> {};

TEST_P(MultiDeviceEngine, TrainsToTheSingleDeviceLossesOverTenSteps) {
  const auto& [job, setting] = GetParam();
  const std::vector<double>& expected = SingleDeviceLosses(job);
  ASSERT_EQ(expected.size(), static_cast<size_t>(kSteps));
  // The job must train, or equal losses would prove little.
  EXPECT_LT(expected.back(), expected.front());

  const proto::Plan plan = Compile(job, &setting, kSteps);
  ASSERT_EQ(plan.device_size(), setting.devices());
  StatusOr<runtime::RunResult> run = runtime::RunPlan(plan, BoundedRun());
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->steps.size(), static_cast<size_t>(kSteps));
  double worst = 0;
  for (int step = 0; step < kSteps; ++step) {
    const double actual = run->steps[step].loss;
    ASSERT_TRUE(std::isfinite(actual)) << "step " << step;
    const double relative = std::abs(actual - expected[step]) / std::abs(expected[step]);
    worst = std::max(worst, relative);
    EXPECT_LE(relative, kRelativeTolerance)
        << job << " " << setting.name << " step " << step << ": " << actual << " on "
        << setting.devices() << " devices, " << expected[step] << " on one";
  }
  // Every device allocated exactly what the plan gave it.
  ASSERT_EQ(run->memory.size(), static_cast<size_t>(setting.devices()));
  for (const runtime::DeviceMemory& memory : run->memory) {
    EXPECT_EQ(memory.allocated_bytes, memory.planned_bytes) << memory.device;
  }
  char worst_text[32];
  std::snprintf(worst_text, sizeof(worst_text), "%.3e", worst);
  ::testing::Test::RecordProperty("worst_relative_difference", worst_text);
  std::printf("[ worst    ] %s %s: %s\n", job.c_str(), setting.name, worst_text);
}

INSTANTIATE_TEST_SUITE_P(
    Jobs, MultiDeviceEngine,
    ::testing::Combine(::testing::Values("mlp", "transformer"), ::testing::ValuesIn(kSettings)),
    [](const ::testing::TestParamInfo<std::tuple<std::string, Setting>>& info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

// Everything the compiler emits for many devices is a plan the actors accept (slice-copies,
// boxing, derived slots), on cpu and on sim clusters, for every setting above and all three
// degrees at once.
TEST(MultiDevicePlans, PassDescribeActors) {
  std::vector<Setting> settings(std::begin(kSettings), std::end(kSettings));
  settings.push_back({"dp2_tp2_pp2", 2, 2, 2});
  for (const std::string job : {"mlp", "transformer"}) {
    for (const Setting& setting : settings) {
      for (const std::string kind : {"cpu", "sim"}) {
        SCOPED_TRACE(job + " " + setting.name + " " + kind);
        StatusOr<compiler::JobFile> file = compiler::ParseJobFile(JobPath(job));
        ASSERT_TRUE(file.ok()) << file.status();
        compiler::CompileOptions options;
        options.cluster = *placement::LoadClusterSpec(std::to_string(setting.devices()) + kind);
        options.parallel.set_data_parallel(setting.dp);
        options.parallel.set_tensor_parallel(setting.tp);
        options.parallel.set_pipeline_stages(setting.pp);
        StatusOr<proto::Plan> plan = compiler::CompileJob(*file, options);
        ASSERT_TRUE(plan.ok()) << plan.status();
        StatusOr<std::vector<actors::ActorDescription>> described = actors::DescribeActors(*plan);
        EXPECT_TRUE(described.ok()) << described.status();
      }
    }
  }
}

// The reference interpreter runs multi-device plans too (slice-copies, boxing): in double
// precision their losses equal the single-device plan's up to the order of sums (1e-9
// relative is far above ~1e-15 per reordered addition and far below any wiring mistake). Two
// steps, the two settings with the most boxing, to stay cheap.
TEST(MultiDeviceReference, ComputesTheSingleDevicePlansLosses) {
  constexpr int kReferenceSteps = 2;
  for (const std::string job : {"mlp", "transformer"}) {
    StatusOr<reference::ReferenceResult> single =
        reference::RunReferencePlan(Compile(job, nullptr, kReferenceSteps), {});
    ASSERT_TRUE(single.ok()) << single.status();
    for (const Setting& setting : {kSettings[2], kSettings[6]}) {  // tp2, dp2 x tp2.
      SCOPED_TRACE(job + " " + setting.name);
      StatusOr<reference::ReferenceResult> parallel =
          reference::RunReferencePlan(Compile(job, &setting, kReferenceSteps), {});
      ASSERT_TRUE(parallel.ok()) << parallel.status();
      ASSERT_EQ(parallel->steps.size(), single->steps.size());
      for (size_t step = 0; step < single->steps.size(); ++step) {
        EXPECT_NEAR(parallel->steps[step].loss, single->steps[step].loss,
                    1e-9 * std::abs(single->steps[step].loss))
            << "step " << step;
      }
    }
  }
}

}  // namespace
}  // namespace softwire
