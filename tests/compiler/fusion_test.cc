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
#include "plan/ordering_inputs.h"
#include "plan/register_lifetimes.h"
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

// The runtime readies a register's readers in the plan's order and one worker runs them in the
// order they became ready, so a fused actor comes after the other readers of its inputs: its
// own readers then run right after it, reading its outputs while they are in cache, as the
// readers of the chain's last member did without fusion (docs/DECISIONS.md, "Fused actors are
// readied last"). In charlm's backward pass the weight gradient `block1_proj.grad_b` then runs
// before the fused `block1_proj.grad_a+block1_gelu.grad_x+...`, not between it and the bias
// gradient that reads its float32 output.
TEST(Fusion, AFusedActorIsReadiedAfterTheOtherReadersOfItsInputs) {
  for (const char* path : {"tests/compiler/jobs/mlp.pbtxt", "demos/charlm/charlm.pbtxt"}) {
    SCOPED_TRACE(path);
    const proto::Plan plan = Compile(path, true, proto::PRECISION_BF16);
    int shared_inputs = 0;
    for (const proto::ActorDef& actor : plan.actor()) {
      if (actor.kernel().op_type() != "fused") continue;
      // The registers its kernel reads (an ordering input, a weight gradient it waits for, lists
      // its readers in the order the edges were added: plan/ordering_inputs.h).
      for (int k = 0; k < plan::KernelInputCount(actor); ++k) {
        // No unfused phase-0 reader comes after it (of two fused readers, one comes first).
        const proto::RegisterDef& reg = plan.register_def(actor.input_register(k));
        bool after = false;
        for (const proto::RegisterConsumer& consumer : reg.consumer()) {
          const proto::ActorDef& reader = plan.actor(consumer.actor());
          if (after && consumer.phase() == 0) {
            EXPECT_EQ(reader.kernel().op_type(), "fused")
                << reader.name() << " is readied after " << actor.name() << " by " << reg.name();
          }
          after |= consumer.actor() == actor.id();
        }
        shared_inputs += reg.consumer_size() > 1;
      }
    }
    EXPECT_GT(shared_inputs, 0) << "no fused actor shares an input: the test shows nothing";
  }
}

TEST(Fusion, TheMlpsBiasAddAndReluBecomeOneActorWithoutTheIntermediateRegister) {
  const proto::Plan unfused = Compile("tests/compiler/jobs/mlp.pbtxt", false);
  const proto::Plan fused = Compile("tests/compiler/jobs/mlp.pbtxt", true);
  EXPECT_EQ(CountFused(unfused), 0);
  // The product that feeds the chain runs it in its epilogue (docs/OPS.md "fused").
  const proto::ActorDef* layer = FindActor(fused, "fc1+fc1_bias+relu1");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(layer->kernel().op_type(), "fused");
  EXPECT_EQ(Program(*layer), "t0 = matmul(x0, x1); t1 = bias_add(t0, x2); t2 = relu(t1); y0 = t2");
  EXPECT_EQ(FindActor(fused, "fc1"), nullptr);
  EXPECT_EQ(FindActor(fused, "fc1_bias"), nullptr);
  EXPECT_EQ(FindActor(fused, "relu1"), nullptr);
  // h1 (the product's c) and h1b were read inside the chain alone: they have no register any
  // more; a1 (read by fc2 and relu1's gradient) is the fused actor's output, under its old name.
  for (const char* gone : {"h1", "h1b"}) {
    EXPECT_NE(FindRegister(unfused, gone), nullptr) << gone;
    EXPECT_EQ(FindRegister(fused, gone), nullptr) << gone;
  }
  ASSERT_NE(FindRegister(fused, "a1"), nullptr);
  EXPECT_EQ(FindRegister(fused, "a1")->producer(), layer->id());
  EXPECT_LT(fused.actor_size(), unfused.actor_size());
  EXPECT_LT(fused.register_def_size(), unfused.register_def_size());
}

TEST(Fusion, UnderBf16AChainKeepsTheValueTheBackwardPassReadsAndWritesTheBfloat16Copy) {
  const proto::Plan plan = Compile("tests/compiler/jobs/mlp.pbtxt", true, proto::PRECISION_BF16);
  const proto::ActorDef* layer = FindActor(plan, "fc1+fc1_bias+relu1+a1.bf16");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(Program(*layer),
            "t0 = matmul(x0, x1); t1 = bias_add(t0, x2); t2 = relu(t1); t3 = cast(t2, bfloat16); "
            "y0 = t2; y1 = t3");
  EXPECT_EQ(layer->kernel().input(0).dtype(), proto::DATA_TYPE_BFLOAT16);
  EXPECT_EQ(layer->kernel().input(1).dtype(), proto::DATA_TYPE_BFLOAT16);
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
  EXPECT_THAT(summary, HasSubstr("(fused: matmul+bias_add+gelu)"));
  EXPECT_THAT(summary, HasSubstr(" products run theirs in their epilogue"));
}

TEST(Fusion, TheTraceLabelsAFusedActorWithTheOpsItHolds) {
  const proto::Plan plan = Compile("tests/compiler/jobs/mlp.pbtxt", true);
  const trace::PlanFacts facts = trace::DescribePlan(plan);
  const proto::ActorDef* layer = FindActor(plan, "fc1+fc1_bias+relu1");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(facts.actors[static_cast<size_t>(layer->id())].name, "fc1+fc1_bias+relu1");
  EXPECT_EQ(facts.actors[static_cast<size_t>(layer->id())].op_type, "fused: matmul+bias_add+relu");
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
  EXPECT_NE(FindActor(*plan, "fc1+fc1_bias+relu1@0"), nullptr);
  EXPECT_NE(FindActor(*plan, "fc1+fc1_bias+relu1@1"), nullptr);
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

// Which products take which chains: each forward layer's product its bias and activation, the
// backward dx products relu's gradient (transposed b); products whose c only a reduction, an
// accumulation or an update reads (the weight gradients) stay matmul actors.
TEST(Fusion, ProductsTakeTheElementWiseChainsThatReadThemAndOnlyThose) {
  const proto::Plan plan = Compile("tests/compiler/jobs/mlp.pbtxt", true);
  const proto::ActorDef* logits = FindActor(plan, "fc3+fc3_bias");
  ASSERT_NE(logits, nullptr);
  EXPECT_EQ(Program(*logits), "t0 = matmul(x0, x1); t1 = bias_add(t0, x2); y0 = t1");
  const proto::ActorDef* gradient = FindActor(plan, "fc3.grad_a+relu2.grad_x");
  ASSERT_NE(gradient, nullptr);
  EXPECT_EQ(Program(*gradient),
            "t0 = matmul(x0, x1, transpose_b); t1 = relu_grad(t0, x2); y0 = t1");
  int products = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.kernel().op_type() != "matmul") continue;
    ++products;
    EXPECT_NE(actor.name().find(".grad_b"), std::string::npos) << actor.name();
  }
  EXPECT_EQ(products, 3) << "the three weight gradients";
}

// A fused product's outputs never lie over its operands, and its value never over an input:
// other bands read the operands, and a band of c lands before the chain reads its inputs
// (proto/fused_program.h FusedMayWriteOver).
TEST(Fusion, NoOutputOfAProductEpilogueLiesOverTheProductsOperands) {
  for (const char* path :
       {"tests/compiler/jobs/mlp.pbtxt", "tests/compiler/jobs/transformer.pbtxt"}) {
    for (proto::Precision precision : {proto::PRECISION_FLOAT32, proto::PRECISION_BF16}) {
      const proto::Plan plan = Compile(path, true, precision);
      int epilogues = 0;
      for (const proto::ActorDef& actor : plan.actor()) {
        if (Program(actor).rfind("t0 = matmul(", 0) != 0) continue;
        ++epilogues;
        for (int input = 0; input < 2; ++input) {
          for (int64_t output : actor.output_register()) {
            EXPECT_FALSE(plan::KernelMayWriteOver(plan, actor, actor.input_register(input), output))
                << path << " " << actor.name();
          }
        }
      }
      EXPECT_GT(epilogues, 0) << path;
    }
  }
}

// `--no-epilogues` (CompileOptions::fuse_epilogues = false): products stay matmul actors and
// the element-wise chains after them fuse on their own, as before product epilogues.
TEST(Fusion, WithoutEpiloguesChainsFuseWithoutTheirProducts) {
  StatusOr<JobFile> job = ParseJobFile("tests/compiler/jobs/mlp.pbtxt");
  ASSERT_TRUE(job.ok()) << job.status();
  CompileOptions options;
  options.steps = 3;
  options.fuse_epilogues = false;
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const proto::ActorDef* layer = FindActor(*plan, "fc1_bias+relu1");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(Program(*layer), "t0 = bias_add(x0, x1); t1 = relu(t0); y0 = t1");
  ASSERT_NE(FindActor(*plan, "fc1"), nullptr);
  EXPECT_EQ(FindActor(*plan, "fc1")->kernel().op_type(), "matmul");
  for (const proto::ActorDef& actor : plan->actor()) {
    EXPECT_EQ(Program(actor).find("matmul"), std::string::npos) << actor.name();
  }
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
