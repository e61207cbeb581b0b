// The example jobs in tests/compiler/jobs/ (which the end-to-end suites reuse) compile into
// plans with the structure their comments promise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compiler/compiler.h"
#include "compiler/emitted_plan_check.h"
#include "compiler/testing/compiler_test_util.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

proto::Plan CompileExample(const std::string& name) {
  StatusOr<JobFile> job = ParseJobFile("tests/compiler/jobs/" + name + ".pbtxt");
  CHECK(job.ok()) << job.status();
  CompileOptions options;
  options.cluster = OneCpuCluster();
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  CHECK(plan.ok()) << plan.status();
  return std::move(plan).value();
}

int CountKind(const proto::Plan& plan, proto::ActorKind kind) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) count += actor.kind() == kind ? 1 : 0;
  return count;
}

TEST(MlpExample, TrainsSixParametersWithAccumulatedSgdSteps) {
  proto::Plan plan = CompileExample("mlp");
  EXPECT_TRUE(CheckEmittedPlan(plan).ok()) << CheckEmittedPlan(plan);
  EXPECT_EQ(plan.schedule().pieces_per_step(), 2);
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_VARIABLE), 6);
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_ACCUMULATE), 6);
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_UPDATE), 6);
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_SINK), 2);
  EXPECT_EQ(FindActor(plan, "fc1.grad_a"), nullptr);
  EXPECT_EQ(plan.register_def(FindActor(plan, "w1")->output_register(0)).bytes_per_slot(),
            784 * 256 * 4);
  // sgd keeps one float of velocity per weight; b3's 40 bytes take an aligned 64.
  EXPECT_EQ(plan.device(0).state_bytes(), 4 * (784 * 256 + 256 + 256 * 256 + 256 + 256 * 10) + 64);
}

TEST(TransformerExample, TrainsEveryParameterWithAdamThroughCausalAttention) {
  proto::Plan plan = CompileExample("transformer");
  EXPECT_TRUE(CheckEmittedPlan(plan).ok()) << CheckEmittedPlan(plan);
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_VARIABLE), 28);
  EXPECT_EQ(CountKind(plan, proto::ACTOR_KIND_UPDATE), 28);
  EXPECT_EQ(FindActor(plan, "wte.update")->kernel().op_type(), "adam_update");
  // The tied embedding gets its two gradients summed: the add_n runs in the epilogue of the
  // output layer's weight-gradient product, which feeds it (docs/OPS.md "fused").
  const proto::ActorDef* tied = FindActor(plan, "logits.grad_b+wte.grad");
  ASSERT_NE(tied, nullptr);
  ASSERT_EQ(tied->kernel().op_type(), "fused");
  EXPECT_EQ(tied->kernel().attr(0).string(),
            "t0 = matmul(x0, x1, transpose_a); t1 = add_n(t0, x2); y0 = t1");
  // The position embedding's gradient undoes the broadcast over the batch.
  EXPECT_EQ(FindActor(plan, "add_positions.grad_b")->kernel().op_type(), "sum_to_shape");
  const proto::KernelDef& softmax = FindActor(plan, "h1.softmax")->kernel();
  EXPECT_EQ(softmax.attr(0).name(), "causal");
  EXPECT_TRUE(softmax.attr(0).bool_());
  EXPECT_EQ(softmax.input(0).dims_size(), 4);  // [B, H, T, T]
  const proto::ActorDef* gelu_grad = FindActor(plan, "h0.proj.grad_a+h0.gelu.grad_x");
  ASSERT_NE(gelu_grad, nullptr);
  EXPECT_EQ(gelu_grad->kernel().attr(0).string(),
            "t0 = matmul(x0, x1, transpose_b); t1 = gelu_grad(t0, x2); y0 = t1");
  EXPECT_EQ(FindActor(plan, "ln_f.grad")->kernel().output_size(), 3);
}

TEST(ExampleJobs, SummarizeWithOneLinePerActor) {
  proto::Plan plan = CompileExample("mlp");
  std::string summary = SummarizePlan(plan);
  // Op fusion made each layer's product, bias add and relu one actor (fc1+fc1_bias+relu1), the
  // logits' product and bias add one, and each hidden layer's input-gradient product and relu's
  // gradient one; it adds its line.
  EXPECT_THAT(summary, HasSubstr("actors: 39 (source 1, compute 18, variable 6, accumulate 6, "
                                 "update 6, sink 2)"));
  EXPECT_THAT(summary, HasSubstr("fusion: 5 fused actors hold 7 element-wise ops; 5 products run "
                                 "theirs in their epilogues"));
  // Schedule, "devices:", per device its line and what it holds, actors, fusion, the table's
  // header.
  EXPECT_EQ(std::count(summary.begin(), summary.end(), '\n'),
            4 + 2 * plan.device_size() + 1 + plan.actor_size());
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
