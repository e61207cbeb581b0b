// Op fusion (fuse_elementwise_pass.cc): chains of element-wise actors become one `fused` actor
// named after the ops it holds, intermediate registers go, `compile --dump` and the summary show
// the program; the fused plans compute what the unfused plans compute (the double-precision
// reference interpreter running both: the reference runs a fused statement through its op's own
// kernel, so they agree to the last bits), in float32 and bf16; the trace labels a fused actor
// with its ops; `fuse_elementwise = false` leaves the plan as it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compiler/compiler.h"
#include "compiler/testing/compiler_test_util.h"
#include "reference/interpreter/reference_interpreter.h"
#include "trace/plan_facts.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

proto::Plan Compile(const std::string& path, bool fusion,
                    proto::Precision precision = proto::PRECISION_FLOAT32) {
  StatusOr<JobFile> job = ParseJobFile(path);
  EXPECT_TRUE(job.ok()) << job.status();
  CompileOptions options;
  options.steps = 3;
  options.fuse_elementwise = fusion;
  options.precision = precision;
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : proto::Plan();
}

std::string Program(const proto::ActorDef& actor) {
  for (const proto::Attribute& attribute : actor.kernel().attr()) {
    if (attribute.name() == "program") return attribute.string();
  }
  return "";
}

int CountFused(const proto::Plan& plan) {
  int count = 0;
  for (const proto::ActorDef& actor : plan.actor()) count += actor.kernel().op_type() == "fused";
  return count;
}

const proto::RegisterDef* FindRegister(const proto::Plan& plan, const std::string& name) {
  for (const proto::RegisterDef& reg : plan.register_def()) {
    if (reg.name() == name) return &reg;
  }
  return nullptr;
}

TEST(Fusion, TheMlpsBiasAddAndReluBecomeOneActorWithoutTheIntermediateRegister) {
  const proto::Plan unfused = Compile("tests/compiler/jobs/mlp.pbtxt", false);
  const proto::Plan fused = Compile("tests/compiler/jobs/mlp.pbtxt", true);
  EXPECT_EQ(CountFused(unfused), 0);
  const proto::ActorDef* layer = FindActor(fused, "fc1_bias+relu1");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(layer->kernel().op_type(), "fused");
  EXPECT_EQ(Program(*layer), "t0 = bias_add(x0, x1); t1 = relu(t0); y0 = t1");
  EXPECT_EQ(FindActor(fused, "fc1_bias"), nullptr);
  EXPECT_EQ(FindActor(fused, "relu1"), nullptr);
  // h1b was read by relu1 alone: it has no register any more; a1 (read by fc2 and relu1's
  // gradient) is the fused actor's output, under its old name.
  EXPECT_NE(FindRegister(unfused, "h1b"), nullptr);
  EXPECT_EQ(FindRegister(fused, "h1b"), nullptr);
  ASSERT_NE(FindRegister(fused, "a1"), nullptr);
  EXPECT_EQ(FindRegister(fused, "a1")->producer(), layer->id());
  EXPECT_LT(fused.actor_size(), unfused.actor_size());
  EXPECT_LT(fused.register_def_size(), unfused.register_def_size());
}

TEST(Fusion, UnderBf16AChainKeepsTheValueTheBackwardPassReadsAndWritesTheBfloat16Copy) {
  const proto::Plan plan = Compile("tests/compiler/jobs/mlp.pbtxt", true, proto::PRECISION_BF16);
  const proto::ActorDef* layer = FindActor(plan, "fc1_bias+relu1+a1.bf16");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(Program(*layer),
            "t0 = bias_add(x0, x1); t1 = relu(t0); t2 = cast(t1, bfloat16); y0 = t1; y1 = t2");
  ASSERT_EQ(layer->output_register_size(), 2);
  EXPECT_EQ(plan.register_def(layer->output_register(1)).tensor().dtype(),
            proto::DATA_TYPE_BFLOAT16);
  // relu1's gradient, then its bfloat16 copy for the products; the float32 gradient stays for
  // the bias gradient's column sums.
  bool gradient_chain = false;
  for (const proto::ActorDef& actor : plan.actor()) {
    gradient_chain |= Program(actor).find("relu_grad") != std::string::npos &&
                      Program(actor).find("cast") != std::string::npos;
  }
  EXPECT_TRUE(gradient_chain);
}

TEST(Fusion, CompileDumpAndSummaryShowTheFusedActorsAndTheirOps) {
  const proto::Plan plan = Compile("tests/compiler/jobs/transformer.pbtxt", true);
  ASSERT_GT(CountFused(plan), 0);
  const std::string dump = DumpPlan(plan);
  EXPECT_THAT(dump, HasSubstr("kernel fused {program: \"t0 = "));
  const std::string summary = SummarizePlan(plan);
  EXPECT_THAT(summary, HasSubstr("fusion: " + std::to_string(CountFused(plan)) + " fused actors"));
  EXPECT_THAT(summary, HasSubstr("(fused: bias_add+gelu)"));
}

TEST(Fusion, TheTraceLabelsAFusedActorWithTheOpsItHolds) {
  const proto::Plan plan = Compile("tests/compiler/jobs/mlp.pbtxt", true);
  const trace::PlanFacts facts = trace::DescribePlan(plan);
  const proto::ActorDef* layer = FindActor(plan, "fc1_bias+relu1");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(facts.actors[static_cast<size_t>(layer->id())].name, "fc1_bias+relu1");
  EXPECT_EQ(facts.actors[static_cast<size_t>(layer->id())].op_type, "fused: bias_add+relu");
}

// On two devices chains fuse on each device alone, and the plan still passes every check
// (CompileJob runs the emitted plan checker and the deadlock check).
TEST(Fusion, DataParallelPlansFuseOnEachDevice) {
  StatusOr<JobFile> job = ParseJobFile("tests/compiler/jobs/mlp.pbtxt");
  ASSERT_TRUE(job.ok()) << job.status();
  CompileOptions options;
  options.cluster = ClusterNamedIn("# cluster: 2cpu");
  options.parallel.set_data_parallel(2);
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_NE(FindActor(*plan, "fc1_bias+relu1@0"), nullptr);
  EXPECT_NE(FindActor(*plan, "fc1_bias+relu1@1"), nullptr);
}

TEST(Fusion, TensorsInAnotherLayoutThanPlainStayWithTheirOwnKernels) {
  // The fused kernel walks plain tensors; a convolution net's activations in NHWC keep their
  // layout-aware element-wise kernels, while its plain head still fuses.
  StatusOr<JobFile> job = ParseJobFile("tests/compiler/jobs/resnet_tiny.pbtxt");
  ASSERT_TRUE(job.ok()) << job.status();
  CompileOptions options;
  options.steps = 2;
  options.layouts = "nhwc";
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  int laid_out = 0;
  for (const proto::ActorDef& actor : plan->actor()) {
    bool plain = true;
    for (const proto::TensorDesc& desc : actor.kernel().input()) plain &= desc.layout() == 0;
    for (const proto::TensorDesc& desc : actor.kernel().output()) plain &= desc.layout() == 0;
    laid_out += plain ? 0 : 1;
    if (actor.kernel().op_type() == "fused") {
      EXPECT_TRUE(plain) << actor.name();
    }
  }
  EXPECT_GT(laid_out, 0) << "the job has no tensor in NHWC: the test shows nothing";
}

void ExpectSameReferenceResults(const proto::Plan& unfused, const proto::Plan& fused) {
  reference::ReferenceOptions options;
  options.steps = 3;
  StatusOr<reference::ReferenceResult> expected = reference::RunReferencePlan(unfused, options);
  ASSERT_TRUE(expected.ok()) << expected.status();
  StatusOr<reference::ReferenceResult> got = reference::RunReferencePlan(fused, options);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->steps.size(), expected->steps.size());
  for (size_t step = 0; step < expected->steps.size(); ++step) {
    for (const auto& [name, value] : expected->steps[step].outputs) {
      EXPECT_NEAR(got->steps[step].outputs.at(name), value, 1e-12 * std::max(1.0, std::fabs(value)))
          << name << " at step " << step;
    }
  }
}

TEST(Fusion, FusedPlansComputeWhatUnfusedPlansComputeInTheReference) {
  for (const char* path :
       {"tests/compiler/jobs/mlp.pbtxt", "tests/compiler/jobs/transformer.pbtxt"}) {
    for (proto::Precision precision : {proto::PRECISION_FLOAT32, proto::PRECISION_BF16}) {
      SCOPED_TRACE(std::string(path) + (precision == proto::PRECISION_BF16 ? " bf16" : " float32"));
      const proto::Plan fused = Compile(path, true, precision);
      EXPECT_GT(CountFused(fused), 0);
      ExpectSameReferenceResults(Compile(path, false, precision), fused);
    }
  }
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
