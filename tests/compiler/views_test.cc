// Views (fold_views_pass.cc): a reshape, the flattenings the gradient matmuls insert, a
// transpose of the last two axes read by a matmul, and a transpose read strided by batch_matmuls
// are no actor and no register of their own;
// their readers read the input's register. The plans compute what the plans with copies
// computed (the double-precision reference interpreter, both ways), and the planned bytes of
// the bench jobs stay at or under the figures BENCHMARKS.md states.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/file.h"
#include "compiler/compiler.h"
#include "compiler/testing/compiler_test_util.h"
#include "reference/interpreter/reference_interpreter.h"

namespace softwire {
namespace compiler {
namespace {

// x [4, 2, 3] -> matmul w1 [3, 4] -> h [4, 2, 4] -> reshape [-1, 8] -> matmul by the
// transpose of w2t [5, 8] (tied-weight style) -> logits [4, 5]. Backward adds the flattenings
// of fc1's weight gradient (h's gradient is 3-d).
constexpr char kViewsJob[] = R"pb(
  name: "views"
  source {
    name: "data"
    output {
      name: "x"
      dtype: DATA_TYPE_FLOAT32
      sample_dims: [ 2, 3 ]
    }
    output { name: "labels" dtype: DATA_TYPE_INT32 }
    synthetic { seed: 7 int_high: 5 }
  }
  variable {
    name: "w1"
    dtype: DATA_TYPE_FLOAT32
    dims: [ 3, 4 ]
    initializer { normal { stddev: 0.3 seed: 1 } }
  }
  variable {
    name: "w2t"
    dtype: DATA_TYPE_FLOAT32
    dims: [ 5, 8 ]
    initializer { normal { stddev: 0.3 seed: 2 } }
  }
  op {
    name: "fc1"
    type: "matmul"
    input: [ "x", "w1" ]
    output: "h"
  }
  op {
    name: "flat"
    type: "reshape"
    input: "h"
    output: "h_flat"
    attr {
      name: "shape"
      ints { value: [ -1, 8 ] }
    }
  }
  op {
    name: "w2"
    type: "transpose"
    input: "w2t"
    output: "w2"
    attr {
      name: "perm"
      ints { value: [ 1, 0 ] }
    }
  }
  op {
    name: "fc2"
    type: "matmul"
    input: [ "h_flat", "w2" ]
    output: "logits"
  }
  op {
    name: "xent"
    type: "softmax_cross_entropy"
    input: [ "logits", "labels" ]
    output: "losses"
  }
  op { name: "mean_loss" type: "reduce_mean" input: "losses" output: "loss" }
  train {
    loss: "loss"
    optimizer { sgd { learning_rate: 0.5 } }
    steps: 3
    micro_batch_size: 4
    micro_batches_per_step: 2
  }
)pb";

proto::Plan CompileText(const std::string& text, bool fold_views) {
  CompileOptions options;
  options.fold_views = fold_views;
  StatusOr<proto::Plan> plan = CompileJobText(text, options);
  CHECK(plan.ok()) << plan.status();
  return std::move(plan).value();
}

proto::Plan CompilePath(const std::string& path, bool fold_views) {
  StatusOr<std::string> text = ReadFile(path);
  CHECK(text.ok()) << text.status();
  StatusOr<JobFile> job = ParseJobFile(path);
  CHECK(job.ok()) << job.status();
  CompileOptions options;
  options.cluster = ClusterNamedIn(*text);
  options.fold_views = fold_views;
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  CHECK(plan.ok()) << path << ": " << plan.status();
  return std::move(plan).value();
}

const proto::ActorDef* FindActor(const proto::Plan& plan, const std::string& name) {
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.name() == name) return &actor;
  }
  return nullptr;
}

const proto::RegisterDef* FindRegister(const proto::Plan& plan, const std::string& name) {
  for (const proto::RegisterDef& reg : plan.register_def()) {
    if (reg.name() == name) return &reg;
  }
  return nullptr;
}

int CountOpType(const proto::Plan& plan, const std::string& op_type) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) count += actor.kernel().op_type() == op_type;
  return count;
}

bool ReadsRegister(const proto::ActorDef& actor, int64_t register_id) {
  for (int64_t r : actor.input_register()) {
    if (r == register_id) return true;
  }
  return false;
}

bool BoolAttribute(const proto::ActorDef& actor, const std::string& name) {
  for (const proto::Attribute& attribute : actor.kernel().attr()) {
    if (attribute.name() == name) return attribute.bool_();
  }
  return false;
}

TEST(Views, AReshapeIsNoActorAndItsReaderReadsTheInputRegisterReshaped) {
  const proto::Plan copies = CompileText(kViewsJob, /*fold_views=*/false);
  ASSERT_NE(FindActor(copies, "flat"), nullptr);
  ASSERT_NE(FindRegister(copies, "h_flat"), nullptr);

  const proto::Plan views = CompileText(kViewsJob, /*fold_views=*/true);
  EXPECT_EQ(FindActor(views, "flat"), nullptr);
  EXPECT_EQ(FindRegister(views, "h_flat"), nullptr);
  EXPECT_EQ(CountOpType(views, "reshape"), 0);
  const proto::RegisterDef* h = FindRegister(views, "h");
  const proto::ActorDef* fc2 = FindActor(views, "fc2");
  ASSERT_NE(h, nullptr);
  ASSERT_NE(fc2, nullptr);
  // fc2 reads fc1's bytes, as [4, 8], and is one of their consumers (so it releases them).
  ASSERT_EQ(fc2->input_register(0), h->id());
  EXPECT_THAT(h->tensor().dims(), ::testing::ElementsAre(4, 2, 4));
  EXPECT_THAT(fc2->kernel().input(0).dims(), ::testing::ElementsAre(4, 8));
  bool consumer = false;
  for (const proto::RegisterConsumer& c : h->consumer()) consumer |= c.actor() == fc2->id();
  EXPECT_TRUE(consumer);
  EXPECT_EQ(views.actor_size(), copies.actor_size() - 5)
      << "flat, its gradient, fc1's two weight-gradient flattenings and w2 are views";
}

TEST(Views, TheGradientMatmulsFlatteningsAreViews) {
  const proto::Plan copies = CompileText(kViewsJob, /*fold_views=*/false);
  ASSERT_NE(FindActor(copies, "fc1.grad_b.flatten_a"), nullptr);
  ASSERT_NE(FindActor(copies, "fc1.grad_b.flatten_dc"), nullptr);
  const proto::Plan views = CompileText(kViewsJob, /*fold_views=*/true);
  EXPECT_EQ(FindActor(views, "fc1.grad_b.flatten_a"), nullptr);
  EXPECT_EQ(FindActor(views, "fc1.grad_b.flatten_dc"), nullptr);
  const proto::ActorDef* grad_b = FindActor(views, "fc1.grad_b");
  ASSERT_NE(grad_b, nullptr);
  // The weight gradient reads the source's x [4, 2, 3] as [8, 3].
  const proto::RegisterDef* x = FindRegister(views, "x");
  ASSERT_NE(x, nullptr);
  EXPECT_TRUE(ReadsRegister(*grad_b, x->id()));
}

TEST(Views, ATransposeOfTheLastTwoAxesBecomesTheMatmulsTransposeFlag) {
  const proto::Plan copies = CompileText(kViewsJob, /*fold_views=*/false);
  ASSERT_NE(FindActor(copies, "w2"), nullptr);
  EXPECT_FALSE(BoolAttribute(*FindActor(copies, "fc2"), "transpose_b"));
  const proto::Plan views = CompileText(kViewsJob, /*fold_views=*/true);
  EXPECT_EQ(FindActor(views, "w2"), nullptr);
  const proto::ActorDef* fc2 = FindActor(views, "fc2");
  const proto::RegisterDef* w2t = FindRegister(views, "w2t");
  ASSERT_NE(fc2, nullptr);
  ASSERT_NE(w2t, nullptr);
  EXPECT_EQ(fc2->input_register(1), w2t->id());
  EXPECT_TRUE(BoolAttribute(*fc2, "transpose_b"));
  EXPECT_THAT(fc2->kernel().input(1).dims(), ::testing::ElementsAre(5, 8));
}

void ExpectSameResults(const proto::Plan& copies, const proto::Plan& views) {
  reference::ReferenceOptions options;
  options.steps = 3;
  StatusOr<reference::ReferenceResult> expected = reference::RunReferencePlan(copies, options);
  ASSERT_TRUE(expected.ok()) << expected.status();
  StatusOr<reference::ReferenceResult> got = reference::RunReferencePlan(views, options);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->steps.size(), expected->steps.size());
  for (size_t step = 0; step < expected->steps.size(); ++step) {
    for (const auto& [name, value] : expected->steps[step].outputs) {
      EXPECT_NEAR(got->steps[step].outputs.at(name), value, 1e-12 * std::max(1.0, std::fabs(value)))
          << name << " at step " << step;
    }
  }
  for (const auto& [name, tensor] : expected->variables) {
    const std::vector<double>& values = got->variables.at(name).values;
    ASSERT_EQ(values.size(), tensor.values.size()) << name;
    for (size_t e = 0; e < values.size(); ++e) {
      EXPECT_NEAR(values[e], tensor.values[e], 1e-12 * std::max(1.0, std::fabs(tensor.values[e])))
          << name << "[" << e << "]";
    }
  }
  EXPECT_NE(expected->steps.front().loss, expected->steps.back().loss);
}

TEST(Views, ThePlanWithViewsComputesWhatThePlanWithCopiesComputed) {
  ExpectSameResults(CompileText(kViewsJob, false), CompileText(kViewsJob, true));
}

bool HasIntsAttribute(const proto::ActorDef& actor, const std::string& name) {
  for (const proto::Attribute& attribute : actor.kernel().attr()) {
    if (attribute.name() == name) return attribute.ints().value_size() > 0;
  }
  return false;
}

// The heads' split, [B, T, H, D] -> [B, H, T, D], is read strided by the attention products; the
// merge (read by a reshape, then a matmul) stays a copy.
TEST(Views, TheExampleTransformersHeadsAreReadStridedAndComputeWhatTheCopiesComputed) {
  const proto::Plan copies = CompilePath("tests/compiler/jobs/transformer.pbtxt", false);
  const proto::Plan views = CompilePath("tests/compiler/jobs/transformer.pbtxt", true);
  EXPECT_EQ(CountOpType(views, "reshape"), 0);
  EXPECT_LT(CountOpType(views, "transpose"), CountOpType(copies, "transpose"));
  EXPECT_EQ(FindActor(views, "h0.q_heads"), nullptr);
  const proto::ActorDef* scores = FindActor(views, "h0.scores");
  ASSERT_NE(scores, nullptr);
  EXPECT_TRUE(HasIntsAttribute(*scores, "a_perm"));
  EXPECT_TRUE(HasIntsAttribute(*scores, "b_perm"));
  ExpectSameResults(copies, views);
}

// BENCHMARKS.md, "Memory: views": the planned bytes with views (and in-place ops), reuse on,
// one cpu device.
constexpr int64_t kMiB = int64_t{1} << 20;

TEST(Views, CharlmPlansAtMost58MiBWithViewsAnd56MiBWithInPlaceOpsToo) {
  CompileOptions views_only;
  views_only.cluster = OneCpuCluster();
  views_only.in_place = false;
  StatusOr<JobFile> job = ParseJobFile("demos/charlm/charlm.pbtxt");
  ASSERT_TRUE(job.ok()) << job.status();
  StatusOr<proto::Plan> without_in_place = CompileJob(*job, views_only);
  ASSERT_TRUE(without_in_place.ok()) << without_in_place.status();
  EXPECT_LE(without_in_place->device(0).planned_bytes(), 58 * kMiB);
  const proto::Plan plan = CompilePath("demos/charlm/charlm.pbtxt", true);
  ASSERT_EQ(plan.device_size(), 1);
  EXPECT_LE(plan.device(0).planned_bytes(), 56 * kMiB);
  // Without product epilogues (docs/OPS.md "fused"; with them the matmul's output has no
  // register), the first block's bias add writes in place over its matmul's output.
  CompileOptions unfolded_options = views_only;
  unfolded_options.in_place = true;
  unfolded_options.fuse_epilogues = false;
  StatusOr<proto::Plan> unfolded = CompileJob(*job, unfolded_options);
  ASSERT_TRUE(unfolded.ok()) << unfolded.status();
  EXPECT_LE(unfolded->device(0).planned_bytes(), 56 * kMiB);
  const proto::RegisterDef* fc = FindRegister(*unfolded, "block0_fc");
  const proto::RegisterDef* fc_bias = FindRegister(*unfolded, "block0_fc_bias");
  ASSERT_NE(fc, nullptr);
  ASSERT_NE(fc_bias, nullptr);
  EXPECT_EQ(fc_bias->offset(), fc->offset());
  EXPECT_THAT(fc_bias->shares_bytes_with(), ::testing::Contains(fc->id()));
  EXPECT_EQ(CountOpType(plan, "reshape"), 0);
  // Left: each block's head merge and the three heads' gradients back to [B, T, H, D].
  EXPECT_EQ(CountOpType(plan, "transpose"), 8);
}

TEST(Views, TheMlpBenchJobPlansAtMost27MiB) {
  const proto::Plan plan = CompilePath("bench/training/mlp.pbtxt", true);
  ASSERT_EQ(plan.device_size(), 1);
  EXPECT_LE(plan.device(0).planned_bytes(), 27 * kMiB);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
