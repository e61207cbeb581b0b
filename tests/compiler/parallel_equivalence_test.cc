// Parallel plans compute what the single-device plan computes, checked at the compiler's level:
// every parallel plan of the example jobs computes the single-device plan's losses, metrics and
// final weights. Both plans run through the
// reference interpreter in double precision (reference/interpreter: the actors' protocol, run
// sequentially, with the reference kernels), so the only difference left is the order of
// floating-point sums (partial sums added across devices, gradients reduced in a ring): 1e-9
// relative is far above that (about 1e-15 per addition over a few thousand additions) and far
// below any wiring mistake (a lost or doubled partial term moves a loss by percents).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/compiler.h"
#include "compiler/testing/parallel_settings.h"
#include "reference/interpreter/reference_interpreter.h"

namespace softwire {
namespace compiler {
namespace {

// On exactly the setting's devices.
proto::Plan Compile(const std::string& job, const ParallelSetting& setting) {
  StatusOr<JobFile> file = ParseJobFile("tests/compiler/jobs/" + job + ".pbtxt");
  CHECK(file.ok()) << file.status();
  StatusOr<proto::Plan> plan = CompileJob(*file, ParallelOptions(setting, setting.Devices()));
  CHECK(plan.ok()) << job << " " << setting.name << ": " << plan.status();
  return std::move(plan).value();
}

void ExpectClose(double actual, double expected, const std::string& what) {
  EXPECT_NEAR(actual, expected, 1e-9 * std::max(1.0, std::fabs(expected))) << what;
}

class ParallelEquivalence
    : public ::testing::TestWithParam<std::tuple<std::string, ParallelSetting>> {};

TEST_P(ParallelEquivalence, ComputesTheSingleDeviceLossesMetricsAndWeights) {
  const auto& [job, setting] = GetParam();
  reference::ReferenceOptions three_steps;
  three_steps.steps = 3;
  StatusOr<reference::ReferenceResult> single =
      reference::RunReferencePlan(Compile(job, {"one", 1, 1, 1}), three_steps);
  ASSERT_TRUE(single.ok()) << single.status();
  StatusOr<reference::ReferenceResult> parallel =
      reference::RunReferencePlan(Compile(job, setting), three_steps);
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  ASSERT_EQ(parallel->steps.size(), single->steps.size());
  for (size_t step = 0; step < single->steps.size(); ++step) {
    for (const auto& [name, value] : single->steps[step].outputs) {
      ExpectClose(parallel->steps[step].outputs.at(name), value,
                  name + " at step " + std::to_string(step));
    }
  }
  // Training moved the weights (so equal weights mean equal updates), identically.
  ASSERT_EQ(parallel->variables.size(), single->variables.size());
  for (const auto& [name, tensor] : single->variables) {
    const std::vector<double>& got = parallel->variables.at(name).values;
    ASSERT_EQ(got.size(), tensor.values.size()) << name;
    for (size_t e = 0; e < got.size(); ++e) ExpectClose(got[e], tensor.values[e], name);
  }
  EXPECT_NE(single->steps.front().loss, single->steps.back().loss);
}

INSTANTIATE_TEST_SUITE_P(
    MlpAndTransformer, ParallelEquivalence,
    ::testing::Combine(::testing::Values("mlp", "transformer"),
                       ::testing::ValuesIn(kParallelSettings)),
    [](const ::testing::TestParamInfo<std::tuple<std::string, ParallelSetting>>& info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

}  // namespace
}  // namespace compiler
}  // namespace softwire
