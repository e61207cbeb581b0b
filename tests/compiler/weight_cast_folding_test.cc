// fold_weight_casts (docs/PRECISION.md, "The update writes the bf16 copy"): under bf16 every
// optimizer update also writes its variable's bfloat16 copy, in phase 1, and the variable's cast
// casts on the first firing only; the copy's register keeps its value from step to step (one
// slot, shared with nothing); off with CompileOptions::fold_weight_casts and under float32
// nothing changes; per device under data and tensor parallelism; and the reference interpreter
// computes the same losses, bit for bit, with the fold on and off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/file.h"
#include "compiler/compiler.h"
#include "compiler/emitted_plan_check.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"
#include "reference/interpreter/reference_interpreter.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

constexpr char kMlp[] = "tests/compiler/jobs/mlp.pbtxt";                  // sgd with momentum.
constexpr char kTransformer[] = "tests/compiler/jobs/transformer.pbtxt";  // adam.

struct Setting {
  proto::Precision precision = proto::PRECISION_BF16;
  bool fold = true;
  std::string cluster;
  int dp = 0;
  int tp = 0;
};

proto::Plan Compile(const std::string& path, const Setting& setting) {
  StatusOr<std::string> text = ReadFile(path);
  CHECK(text.ok()) << text.status();
  CompileOptions options;
  options.steps = 4;
  options.precision = setting.precision;
  options.fold_weight_casts = setting.fold;
  if (!setting.cluster.empty()) {
    StatusOr<proto::Cluster> spec = placement::LoadClusterSpec(setting.cluster);
    CHECK(spec.ok()) << spec.status();
    options.cluster = *spec;
  }
  if (setting.dp > 0) options.parallel.set_data_parallel(setting.dp);
  if (setting.tp > 0) options.parallel.set_tensor_parallel(setting.tp);
  StatusOr<proto::Plan> plan = CompileJobText(*text, options);
  CHECK(plan.ok()) << plan.status();
  return std::move(plan).value();
}

bool FirstFiringOnly(const proto::ActorDef& actor) {
  for (const proto::Attribute& attribute : actor.kernel().attr()) {
    if (attribute.name() == "first_firing_only") return attribute.bool_();
  }
  return false;
}

bool IsOptimizerUpdate(const proto::ActorDef& actor) {
  return actor.kernel().op_type() == "sgd_update" || actor.kernel().op_type() == "adam_update";
}

int PhaseOf(const proto::RegisterDef& register_def, int64_t actor) {
  for (const proto::RegisterConsumer& consumer : register_def.consumer()) {
    if (consumer.actor() == actor) return consumer.phase();
  }
  return -1;
}

// Whether a cast reads the register (a variable products read: a weight, not a bias).
bool SomeCastReads(const proto::Plan& plan, int64_t register_id) {
  for (const proto::RegisterConsumer& consumer : plan.register_def(register_id).consumer()) {
    if (plan.actor(consumer.actor()).kernel().op_type() == "cast") return true;
  }
  return false;
}

// Every optimizer update of a variable that products read writes the copy its variable's
// first_firing_only cast makes (the others, biases, read two inputs); returns how many do.
int ExpectEveryUpdateWritesItsCopy(const proto::Plan& plan) {
  EXPECT_TRUE(CheckEmittedPlan(plan).ok()) << CheckEmittedPlan(plan);
  int folded = 0;
  for (const proto::ActorDef& update : plan.actor()) {
    if (!IsOptimizerUpdate(update)) continue;
    SCOPED_TRACE(update.name());
    EXPECT_EQ(update.input_register_size(), SomeCastReads(plan, update.input_register(1)) ? 3 : 2);
    if (update.input_register_size() != 3) continue;
    const proto::RegisterDef& weight = plan.register_def(update.input_register(1));
    const proto::RegisterDef& copy = plan.register_def(update.input_register(2));
    EXPECT_EQ(copy.tensor().dtype(), proto::DATA_TYPE_BFLOAT16);
    EXPECT_EQ(PhaseOf(copy, update.id()), 1);
    // Kept from step to step: one slot, and no other register's bytes.
    EXPECT_EQ(copy.slots(), 1);
    EXPECT_EQ(copy.shares_bytes_with_size(), 0);
    const proto::ActorDef& cast = plan.actor(copy.producer());
    EXPECT_EQ(cast.kernel().op_type(), "cast");
    EXPECT_TRUE(FirstFiringOnly(cast));
    EXPECT_EQ(cast.input_register_size(), 1);
    if (cast.input_register_size() == 1) {
      EXPECT_EQ(cast.input_register(0), weight.id());
    }
    EXPECT_EQ(cast.device(), update.device());
    // Everything else reads the copy before the update writes it.
    for (const proto::RegisterConsumer& consumer : copy.consumer()) {
      if (consumer.actor() != update.id()) {
        EXPECT_EQ(consumer.phase(), 0);
      }
    }
    ++folded;
  }
  return folded;
}

int CountFirstFiringOnlyCasts(const proto::Plan& plan) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) count += FirstFiringOnly(actor);
  return count;
}

TEST(WeightCastFolding, EveryUpdateWritesTheBf16CopyOfItsVariable) {
  for (const char* path : {kMlp, kTransformer}) {
    SCOPED_TRACE(path);
    const proto::Plan plan = Compile(path, Setting());
    const int folded = ExpectEveryUpdateWritesItsCopy(plan);
    EXPECT_GT(folded, 0);
    EXPECT_EQ(CountFirstFiringOnlyCasts(plan), folded);
    EXPECT_THAT(SummarizePlan(plan),
                HasSubstr(std::to_string(folded) + " on the first step only, later steps' copies "
                                                   "written by the optimizer updates"));
  }
}

TEST(WeightCastFolding, OffAndUnderFloat32NothingFolds) {
  Setting off;
  off.fold = false;
  Setting float32;
  float32.precision = proto::PRECISION_FLOAT32;
  for (const Setting& setting : {off, float32}) {
    const proto::Plan plan = Compile(kTransformer, setting);
    EXPECT_TRUE(CheckEmittedPlan(plan).ok()) << CheckEmittedPlan(plan);
    EXPECT_EQ(CountFirstFiringOnlyCasts(plan), 0);
    for (const proto::ActorDef& actor : plan.actor()) {
      if (IsOptimizerUpdate(actor)) {
        EXPECT_EQ(actor.input_register_size(), 2) << actor.name();
      }
    }
  }
}

TEST(WeightCastFolding, FoldsOnEveryDeviceUnderDataAndTensorParallelism) {
  Setting dp;
  dp.cluster = "2cpu";
  dp.dp = 2;
  Setting tp;
  tp.cluster = "2cpu";
  tp.tp = 2;
  for (const Setting& setting : {dp, tp}) {
    SCOPED_TRACE(setting.dp > 0 ? "dp 2" : "tp 2");
    const proto::Plan plan = Compile(kMlp, setting);
    // Each device's update writes the copy its device's cast makes of its part.
    EXPECT_GT(ExpectEveryUpdateWritesItsCopy(plan), 0);
  }
}

TEST(WeightCastFolding, TheReferenceComputesTheSameLossesWithTheFoldOnAndOff) {
  Setting off;
  off.fold = false;
  for (const char* path : {kMlp, kTransformer}) {
    SCOPED_TRACE(path);
    reference::ReferenceOptions options;
    options.steps = 4;
    StatusOr<reference::ReferenceResult> folded =
        reference::RunReferencePlan(Compile(path, Setting()), options);
    ASSERT_TRUE(folded.ok()) << folded.status();
    StatusOr<reference::ReferenceResult> unfolded =
        reference::RunReferencePlan(Compile(path, off), options);
    ASSERT_TRUE(unfolded.ok()) << unfolded.status();
    ASSERT_EQ(folded->steps.size(), 4u);
    ASSERT_EQ(unfolded->steps.size(), 4u);
    for (size_t step = 0; step < 4; ++step) {
      for (const auto& [name, value] : unfolded->steps[step].outputs) {
        EXPECT_EQ(folded->steps[step].outputs.at(name), value) << name << " at step " << step;
      }
    }
  }
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
