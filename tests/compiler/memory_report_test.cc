// What planned bytes hold (plan/memory_breakdown.h, issue 14 item 5): on the MLP bench job, the
// flagship transformer and dp, tp and pp plans, every device's split sums to its planned bytes,
// and the figures that can be known otherwise hold (weights = parameters x 4 bytes, momentum the
// same, Adam twice that, one gradient per weight). And the bench jobs' planned bytes against
// PyTorch's live peak.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>

#include "base/file.h"
#include "compiler/compiler.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"
#include "plan/memory_breakdown.h"

namespace softwire {
namespace compiler {
namespace {

constexpr int64_t kAlignment = 64;

int64_t Aligned(int64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

// With no `options`, on the cluster the job names (as `softwire compile` does).
proto::Plan Compile(const std::string& path, const CompileOptions* options = nullptr) {
  StatusOr<JobFile> job = ParseJobFile(path);
  CHECK(job.ok()) << job.status();
  CompileOptions named;
  if (options == nullptr) {
    StatusOr<std::string> text = ReadFile(path);
    CHECK(text.ok()) << text.status();
    named.cluster = ClusterNamedIn(*text);
    options = &named;
  }
  StatusOr<proto::Plan> plan = CompileJob(*job, *options);
  CHECK(plan.ok()) << path << ": " << plan.status();
  return std::move(plan).value();
}

proto::Plan CompileParallel(const std::string& path, int dp, int tp, int pp,
                            const std::string& cluster) {
  CompileOptions options;
  StatusOr<proto::Cluster> parsed = placement::ParseClusterShorthand(cluster, 8);
  CHECK(parsed.ok()) << parsed.status();
  options.cluster = *parsed;
  options.parallel.set_data_parallel(dp);
  options.parallel.set_tensor_parallel(tp);
  options.parallel.set_pipeline_stages(pp);
  return Compile(path, &options);
}

// Parameters of the plan's variables and the bytes their registers take on one device each.
struct Variables {
  int64_t parameters = 0;
  int64_t aligned_bytes = 0;  // One whole copy, each variable aligned.
};

Variables VariablesOf(const proto::Plan& plan) {
  Variables variables;
  for (const proto::PlanVariable& variable : plan.variable()) {
    int64_t count = 1;
    for (int64_t dim : variable.tensor().dims()) count *= dim;
    variables.parameters += count;
    variables.aligned_bytes += Aligned(count * 4);
  }
  return variables;
}

void ExpectSplitsSumToPlanned(const proto::Plan& plan) {
  for (const proto::PlanDevice& device : plan.device()) {
    SCOPED_TRACE(plan.job_name() + " device " + std::to_string(device.id()));
    const plan::MemoryBreakdown b = plan::BreakDownMemory(plan, device.id());
    EXPECT_EQ(b.Total(), device.planned_bytes());
    for (int64_t figure : {b.weights, b.gradients, b.optimizer_state, b.kept_activations,
                           b.transient, b.transfer, b.workspaces, b.other_state, b.padding,
                           b.saved_by_views, b.saved_by_reuse, b.saved_by_in_place}) {
      EXPECT_GE(figure, 0);
    }
    // Sharing never moves a byte out of the arena: side by side minus saved is what is left.
    EXPECT_EQ(b.unshared_weights + b.unshared_gradients + b.unshared_kept_activations +
                  b.unshared_transient + b.unshared_transfer - b.saved_by_reuse -
                  b.saved_by_in_place,
              device.register_bytes());
    EXPECT_LE(b.padding, kAlignment * plan.register_def_size() + kAlignment * 4);
  }
}

TEST(MemoryReport, TheMlpBenchJobHoldsItsWeightsTheirGradientsAndMomentumOnce) {
  const proto::Plan plan = Compile("bench/training/mlp.pbtxt");
  ExpectSplitsSumToPlanned(plan);
  ASSERT_EQ(plan.device_size(), 1);
  const Variables variables = VariablesOf(plan);
  EXPECT_EQ(variables.parameters, 1863690);  // 784x1024 + 1024 + 1024x1024 + 1024 + 1024x10 + 10
  const plan::MemoryBreakdown b = plan::BreakDownMemory(plan, 0);
  EXPECT_EQ(b.weights, variables.aligned_bytes);
  EXPECT_EQ(b.unshared_weights, variables.aligned_bytes);
  EXPECT_GE(b.weights, variables.parameters * 4);
  EXPECT_LT(b.weights, variables.parameters * 4 + kAlignment * plan.variable_size());
  // SGD with momentum: one float per parameter.
  EXPECT_GE(b.optimizer_state, variables.parameters * 4);
  EXPECT_LT(b.optimizer_state, variables.parameters * 4 + kAlignment * plan.variable_size());
  // One gradient per weight, nothing moved between devices.
  EXPECT_GE(b.unshared_gradients, variables.parameters * 4);
  EXPECT_EQ(b.transfer, 0);
  // The batch, the hidden layers' activations and the probabilities are read backward.
  EXPECT_GE(b.kept_activations, 256 * 784 * 4);
  EXPECT_EQ(b.saved_by_views, 0);  // No reshape or transpose.
  // The products' outputs, which reuse used to lay over each other, have no registers: each
  // runs its chain in its epilogue (docs/OPS.md "fused"). Without epilogues reuse saves bytes,
  // and the plan holds no fewer.
  CompileOptions without_epilogues;
  without_epilogues.fuse_epilogues = false;
  const proto::Plan unfolded = Compile("bench/training/mlp.pbtxt", &without_epilogues);
  const plan::MemoryBreakdown u = plan::BreakDownMemory(unfolded, 0);
  EXPECT_GT(u.saved_by_reuse, 0);
  EXPECT_LE(plan.device(0).register_bytes(), unfolded.device(0).register_bytes());
}

TEST(MemoryReport, CharlmsSplitSumsAndItsViewsAndInPlaceOpsSaved) {
  const proto::Plan plan = Compile("demos/charlm/charlm.pbtxt");
  ExpectSplitsSumToPlanned(plan);
  const Variables variables = VariablesOf(plan);
  const plan::MemoryBreakdown b = plan::BreakDownMemory(plan, 0);
  EXPECT_EQ(b.unshared_weights, variables.aligned_bytes);
  EXPECT_EQ(b.weights, variables.aligned_bytes);
  // Adam: two moments per parameter.
  EXPECT_GE(b.optimizer_state, 2 * variables.parameters * 4);
  EXPECT_LT(b.optimizer_state, 2 * (variables.parameters * 4 + kAlignment * plan.variable_size()));
  EXPECT_GT(b.kept_activations, b.weights);  // Activations dominate a transformer's step.
  // 38 reshapes and 8 head-split transposes, each one [32, 64, 128] or [32, 4, 64, 32] fill at
  // least: 46 MiB... the BENCHMARKS.md table's views column, one fill each.
  EXPECT_GE(b.saved_by_views, 8 * 32 * 64 * 128 * 4);
  EXPECT_GT(b.saved_by_in_place, 0);
  EXPECT_GT(b.saved_by_reuse, 0);
}

TEST(MemoryReport, DataTensorAndPipelineParallelSplitsSumOnEveryDevice) {
  const Variables whole = VariablesOf(Compile("bench/training/mlp.pbtxt"));
  {
    const proto::Plan plan = CompileParallel("bench/training/mlp.pbtxt", 2, 1, 1, "2cpu");
    ASSERT_EQ(plan.device_size(), 2);
    ExpectSplitsSumToPlanned(plan);
    for (const proto::PlanDevice& device : plan.device()) {
      // Data parallel: every device holds every weight.
      EXPECT_EQ(plan::BreakDownMemory(plan, device.id()).weights, whole.aligned_bytes);
    }
  }
  {
    const proto::Plan plan = CompileParallel("bench/training/mlp.pbtxt", 1, 2, 1, "2cpu");
    ASSERT_EQ(plan.device_size(), 2);
    ExpectSplitsSumToPlanned(plan);
    int64_t weights = 0;
    for (const proto::PlanDevice& device : plan.device()) {
      const plan::MemoryBreakdown b = plan::BreakDownMemory(plan, device.id());
      EXPECT_LT(b.weights, whole.aligned_bytes);  // Tensor parallel: some weights are split.
      weights += b.weights;
    }
    EXPECT_GE(weights, whole.parameters * 4);
  }
  for (const auto& [dp, tp, pp, cluster] :
       {std::tuple{1, 1, 2, "2cpu"}, std::tuple{2, 2, 1, "4cpu"}, std::tuple{2, 1, 2, "4cpu"}}) {
    const proto::Plan plan =
        CompileParallel("tests/compiler/jobs/transformer.pbtxt", dp, tp, pp, cluster);
    ExpectSplitsSumToPlanned(plan);
    int64_t transfer = 0;
    for (const proto::PlanDevice& device : plan.device()) {
      transfer += plan::BreakDownMemory(plan, device.id()).transfer;
    }
    EXPECT_GT(transfer, 0) << "dp " << dp << " tp " << tp << " pp " << pp;
  }
}

TEST(MemoryReport, TheJsonSummaryCarriesTheSplit) {
  const proto::Plan plan = Compile("bench/training/mlp.pbtxt");
  const std::string json = SummarizePlanJson(plan);
  const plan::MemoryBreakdown b = plan::BreakDownMemory(plan, 0);
  EXPECT_NE(json.find("\"planned_bytes\": " + std::to_string(plan.device(0).planned_bytes())),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"weights\": " + std::to_string(b.weights)), std::string::npos) << json;
  EXPECT_NE(json.find("\"reuse\": " + std::to_string(b.saved_by_reuse)), std::string::npos);
  const std::string text = SummarizePlan(plan);
  EXPECT_NE(text.find("holds weights "), std::string::npos) << text;
}

// PyTorch 1.13's live tensor peak over a steady-state step of the same jobs, measured by
// bench/memory/memory_bench.py on 2026-11-28 (BENCHMARKS.md, "Memory: the report, peak RSS and
// PyTorch"): the MLP peer zeroing with set_to_none=True, the charlm peer as
// demos/charlm/torch_reference.py runs it.
constexpr int64_t kPyTorchMlpPeak = 24217724;     // 23.1 MiB
constexpr int64_t kPyTorchCharlmPeak = 54825088;  // 52.3 MiB

// The target is planned <= 1.0x PyTorch's peak on both jobs (0.9x a stretch). With the
// ordering edges (order_weight_gradients: each weight-gradient product runs right after its data
// gradient, and the backward pass starts after the loss, as PyTorch runs them) charlm plans
// 0.95x (0.93x until a fused product's rows were made to land in one of its float32 outputs,
// which then may not lie over an input: 1 MiB more planned, 4 MiB less scratch outside the
// plan, proto/fused_program.h FusedMayWriteOver), and 0.86x with every recompute candidate.
// The MLP plans at most 1.0x: on one cpu device
// its batch has one slot (plan_registers: a second would only let the source fill the next
// batch in the strand's turn, docs/DECISIONS.md "A source's second slot"), and 0.77 MiB more
// with `--source-slots 2`. These bounds are what is reached; they keep the figures from growing.
TEST(MemoryReport, TheBenchJobsPlanWithinTheirRatioToPyTorchsLivePeak) {
  const int64_t mlp = Compile("bench/training/mlp.pbtxt").device(0).planned_bytes();
  const int64_t charlm = Compile("demos/charlm/charlm.pbtxt").device(0).planned_bytes();
  EXPECT_LE(mlp, kPyTorchMlpPeak) << mlp;
  EXPECT_LE(charlm, kPyTorchCharlmPeak * 95 / 100) << charlm;
  CompileOptions two_source_slots;
  two_source_slots.source_slots = 2;
  const int64_t double_buffered =
      Compile("bench/training/mlp.pbtxt", &two_source_slots).device(0).planned_bytes();
  EXPECT_GT(double_buffered, kPyTorchMlpPeak) << double_buffered;
  EXPECT_GE(double_buffered - mlp, 256 * 784 * 4) << "the batch's second slot";
  CompileOptions recompute;
  recompute.recompute = -1;
  const int64_t recomputed =
      Compile("demos/charlm/charlm.pbtxt", &recompute).device(0).planned_bytes();
  EXPECT_LE(recomputed, kPyTorchCharlmPeak * 86 / 100) << recomputed;
  EXPECT_LT(recomputed, charlm);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
