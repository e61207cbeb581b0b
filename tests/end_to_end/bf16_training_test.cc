// Mixed precision end to end (docs/PRECISION.md): bf16 plans of the example MLP,
// transformer and CNN (bf16 convolutions) against the double-precision reference running the same
// plan (which rounds to bfloat16 exactly where the plan casts), and the MLP bench job and the
// transformer trained in bf16 against their float32 losses.
//
// Tolerances, and why they are fair:
// - Engine against reference, same bf16 plan. The reference computes in double and rounds at
//   the casts; the engine computes in float32 and rounds at the same casts. A float32 value
//   within ~2^-24 of a bfloat16 rounding boundary may round the other way: one bfloat16 ulp
//   (2^-8 relative) in a few elements. First step: 5e-5 relative (measured 6.5e-6 on the MLP,
//   2e-8 on the transformer), while a reference that did not round where the plan casts would
//   differ by the whole bf16 effect, 3e-4 on the MLP's first loss: the bound tells them apart.
//   Over 20 steps the example MLP's training is chaotic (its loss jumps by 0.4 between steps
//   at its learning rate) and amplifies that first difference ~300 times (measured worst
//   3.4e-3 at step 15; its float32 run amplifies its 1e-7 roundings alike, to ~1e-5): 1e-2
//   over 20 steps for it, 1e-3 for the transformer (measured 2e-5).
// - bf16 against float32 training, 100 steps: every step's loss within 1e-2 relative (the MLP
//   bench job measured 9e-4, the transformer 6e-5: inputs of every product rounded to 8
//   significant bits, errors of 2^-9 relative that average out over K-term sums), and the bf16
//   run must train (its last loss below its first). Divergence, a stale master weight or an
//   update applied to the bf16 copy would leave the band within a few steps.
// - Activations kept in bf16 between convolutions (the CNN and the small ResNet: convolutions
//   write bf16, batch_norm, relu and add read and write it): the reference rounds every bf16
//   output once where the engine rounds its float32 value once, so the argument above holds
//   per stored activation, but the small ResNet stores ~30 activations a step where the CNN
//   stores a few, so more elements sit near a rounding boundary: first step 1e-4 (measured
//   5.3e-5), and over 10 steps 1e-2 as the MLP (measured 4.5e-3 over 20: its loss rises and
//   falls at its learning rate, amplifying as the MLP's does). Against
//   float32 training, 30 steps of the small ResNet within 2e-2 relative: every activation now
//   carries a 2^-9 rounding, and batch_norm renormalises what it does to the scale.
// - Data parallelism with bf16 activations: dp 2 against one device running micro-batches half
//   as large (each device normalises its own half, as the one device normalises each micro-batch):
//   the same products on the same values; only the float32 order of the weight gradients' sums
//   differs (all-reduce against accumulation), amplified by the bf16 roundings of the next
//   steps: 1e-3 relative over 8 steps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "placement/cluster_spec.h"
#include "reference/interpreter/reference_interpreter.h"
#include "tests/end_to_end/testing/engine_losses.h"

namespace softwire {
namespace {

using end_to_end_testing::EngineLosses;
using end_to_end_testing::RecordFigure;
using end_to_end_testing::WorstRelativeDifference;

proto::Plan Compile(const std::string& path, proto::Precision precision, int64_t steps) {
  compiler::CompileOptions options;
  options.steps = steps;
  options.precision = precision;
  return end_to_end_testing::CompileJobFile(path, options);
}

// `trains`: the reference's last loss must be below its first (the small ResNet's synthetic
// batches make its loss rise and fall over a few steps in float32 too: there the losses must
// only move).
void ExpectBf16EngineMatchesReference(const std::string& path, const std::string& label,
                                      double over_the_steps, int kSteps = 20,
                                      double first_step = 5e-5, bool trains = true) {
  const proto::Plan plan = Compile(path, proto::PRECISION_BF16, kSteps);
  ASSERT_EQ(plan.precision(), proto::PRECISION_BF16);
  StatusOr<reference::ReferenceResult> reference =
      reference::RunReferencePlan(plan, reference::ReferenceOptions());
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<double> expected;
  for (const auto& step : reference->steps) expected.push_back(step.loss);
  const std::vector<double> engine = EngineLosses(plan);
  ASSERT_EQ(engine.size(), expected.size());
  const end_to_end_testing::LossDifferences differences =
      end_to_end_testing::CompareLosses(label, engine, expected);
  EXPECT_LE(differences.first, first_step) << path;
  EXPECT_LE(differences.worst, over_the_steps) << path;
  if (trains) {
    EXPECT_LT(expected.back(), expected.front()) << path << " does not train";
  } else {
    EXPECT_NE(expected.back(), expected.front()) << path << " does not move";
  }
}

TEST(Bf16Training, TheEngineMatchesTheReferenceThatRoundsWhereThePlanCasts) {
  ExpectBf16EngineMatchesReference("tests/compiler/jobs/mlp.pbtxt", "mlp", 1e-2);
  ExpectBf16EngineMatchesReference("tests/compiler/jobs/transformer.pbtxt", "transformer", 1e-3);
  ExpectBf16EngineMatchesReference("tests/compiler/jobs/cnn.pbtxt", "cnn", 1e-3);
}

TEST(Bf16Training, TheResNetWithBf16ActivationsMatchesTheReference) {
  const proto::Plan plan =
      Compile("tests/compiler/jobs/resnet_tiny.pbtxt", proto::PRECISION_BF16, 1);
  int bf16_activations = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    const std::string& op = actor.kernel().op_type();
    if (op == "batch_norm" || op == "relu" || op == "add") {
      bf16_activations += actor.kernel().output(0).dtype() == proto::DATA_TYPE_BFLOAT16 ? 1 : 0;
    }
  }
  EXPECT_GT(bf16_activations, 0) << "the policy keeps no activation in bf16";
  ExpectBf16EngineMatchesReference("tests/compiler/jobs/resnet_tiny.pbtxt", "resnet_tiny", 1e-2, 10,
                                   1e-4, /*trains=*/false);
}

TEST(Bf16Training, TheFloat32FallbackOfCpusWithoutBf16MatchesTheReferenceToo) {
  setenv("SOFTWIRE_CPU_FEATURES_OFF", "avx512_bf16,amx_bf16", 1);
  ExpectBf16EngineMatchesReference("tests/compiler/jobs/mlp.pbtxt", "mlp_fallback", 1e-2);
  ExpectBf16EngineMatchesReference("tests/compiler/jobs/transformer.pbtxt", "transformer_fallback",
                                   1e-3);
  ExpectBf16EngineMatchesReference("tests/compiler/jobs/cnn.pbtxt", "cnn_fallback", 1e-3);
  ExpectBf16EngineMatchesReference("tests/compiler/jobs/resnet_tiny.pbtxt", "resnet_tiny_fallback",
                                   1e-2, 10, 1e-4, /*trains=*/false);
  unsetenv("SOFTWIRE_CPU_FEATURES_OFF");
}

// Under dp, tp and pp on two cpu devices: bf16 copies are split, sent and assembled by the
// boxing actors like float32 ones. The engine against the reference on the same plan, with
// the single-device bounds.
TEST(Bf16Training, ParallelPlansMatchTheReferenceToo) {
  struct Setting {
    const char* name;
    int dp, tp, pp;
  };
  for (const Setting& setting :
       {Setting{"dp2", 2, 1, 1}, Setting{"tp2", 1, 2, 1}, Setting{"pp2", 1, 1, 2}}) {
    SCOPED_TRACE(setting.name);
    StatusOr<compiler::JobFile> job =
        compiler::ParseJobFile("tests/compiler/jobs/transformer.pbtxt");
    ASSERT_TRUE(job.ok()) << job.status();
    compiler::CompileOptions options;
    options.steps = 8;
    options.precision = proto::PRECISION_BF16;
    options.cluster = *placement::LoadClusterSpec("2cpu");
    options.parallel.set_data_parallel(setting.dp);
    options.parallel.set_tensor_parallel(setting.tp);
    options.parallel.set_pipeline_stages(setting.pp);
    StatusOr<proto::Plan> plan = compiler::CompileJob(*job, options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    StatusOr<reference::ReferenceResult> reference =
        reference::RunReferencePlan(*plan, reference::ReferenceOptions());
    ASSERT_TRUE(reference.ok()) << reference.status();
    std::vector<double> expected;
    for (const auto& step : reference->steps) expected.push_back(step.loss);
    const std::vector<double> engine = EngineLosses(*plan);
    ASSERT_EQ(engine.size(), expected.size());
    EXPECT_LE(std::abs(engine[0] - expected[0]) / std::abs(expected[0]), 5e-5);
    const double worst = WorstRelativeDifference(engine, expected);
    RecordFigure(std::string("transformer_") + setting.name + "_worst_relative_difference", worst);
    EXPECT_LE(worst, 1e-3);
  }
}

// dp 2 against one device running the micro-batches each device runs (see the top).
TEST(Bf16Training, TheResNetUnderDataParallelismEqualsOneDevice) {
  auto compile = [](int dp, int64_t micro_batch_size) {
    StatusOr<compiler::JobFile> job =
        compiler::ParseJobFile("tests/compiler/jobs/resnet_tiny.pbtxt");
    EXPECT_TRUE(job.ok()) << job.status();
    compiler::CompileOptions options;
    options.steps = 8;
    options.precision = proto::PRECISION_BF16;
    proto::Training* train = job->job.mutable_train();
    options.micro_batches_per_step =
        train->micro_batch_size() * train->micro_batches_per_step() / (micro_batch_size * dp);
    train->set_micro_batch_size(micro_batch_size * dp);
    if (dp > 1) {
      options.cluster = *placement::LoadClusterSpec(std::to_string(dp) + "cpu");
      options.parallel.set_data_parallel(dp);
    }
    StatusOr<proto::Plan> plan = compiler::CompileJob(*job, options);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *plan : proto::Plan();
  };
  const std::vector<double> one = EngineLosses(compile(1, 4));
  const std::vector<double> dp2 = EngineLosses(compile(2, 4));
  ASSERT_EQ(one.size(), 8u);
  const double worst = WorstRelativeDifference(dp2, one);
  RecordFigure("resnet_tiny_dp2_worst_relative_difference", worst);
  EXPECT_LE(worst, 1e-3);
  EXPECT_NE(one.back(), one.front());  // Its loss rises and falls (see above); it must move.
}

void ExpectBf16TrainsLikeFloat32(const std::string& path, const std::string& label,
                                 int kSteps = 100, double bound = 1e-2, bool trains = true) {
  const std::vector<double> float32 = EngineLosses(Compile(path, proto::PRECISION_FLOAT32, kSteps));
  const std::vector<double> bf16 = EngineLosses(Compile(path, proto::PRECISION_BF16, kSteps));
  ASSERT_EQ(bf16.size(), static_cast<size_t>(kSteps));
  const double worst = WorstRelativeDifference(bf16, float32);
  RecordFigure(label + "_worst_relative_difference", worst);
  RecordFigure(label + "_float32_last_loss", float32.back());
  RecordFigure(label + "_bf16_last_loss", bf16.back());
  EXPECT_LE(worst, bound) << path;
  if (trains) {
    EXPECT_LT(bf16.back(), bf16.front()) << path << " does not train in bf16";
  } else {
    EXPECT_NE(bf16.back(), bf16.front()) << path << " does not move in bf16";
  }
}

TEST(Bf16Training, TheResNetWithBf16ActivationsTrainsWithinTolerancesOfItsFloat32Losses) {
  ExpectBf16TrainsLikeFloat32("tests/compiler/jobs/resnet_tiny.pbtxt", "resnet_tiny", 30, 2e-2,
                              /*trains=*/false);
}

TEST(Bf16Training, TheMlpBenchJobTrainsWithinTolerancesOfItsFloat32LossesOverAHundredSteps) {
  ExpectBf16TrainsLikeFloat32("bench/training/mlp.pbtxt", "bench_mlp");
}

TEST(Bf16Training, TheTransformerTrainsWithinTolerancesOfItsFloat32LossesOverAHundredSteps) {
  ExpectBf16TrainsLikeFloat32("tests/compiler/jobs/transformer.pbtxt", "transformer");
}

}  // namespace
}  // namespace softwire
