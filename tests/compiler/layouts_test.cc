// choose_layouts (docs/LAYOUTS.md) on small plans: which tensors take which layout, reorders
// only where layouts meet and at the job's boundaries (which stay NCHW), every kernel that sees
// a layout other than NCHW one that has a kernel for it, and, through the reference interpreter
// (which holds every tensor in NCHW order whatever its layout), plans with layouts compute what
// plans without compute, on one device and under data and pipeline parallelism.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "compiler/compiler.h"
#include "compiler/emitted_plan_check.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"
#include "plan/ordering_inputs.h"
#include "reference/interpreter/reference_interpreter.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

StatusOr<proto::Plan> CompileWith(const std::string& job, const std::string& layouts, int dp = 1,
                                  int pp = 1) {
  StatusOr<JobFile> file = ParseJobFile("tests/compiler/jobs/" + job + ".pbtxt");
  CHECK(file.ok()) << file.status();
  CompileOptions options;
  options.layouts = layouts;
  options.cluster = *placement::ParseClusterShorthand(std::to_string(dp * pp) + "cpu", 8);
  options.parallel.set_data_parallel(dp);
  options.parallel.set_pipeline_stages(pp);
  return CompileJob(*file, options);
}

proto::Plan Compile(const std::string& job, const std::string& layouts, int dp = 1, int pp = 1) {
  StatusOr<proto::Plan> plan = CompileWith(job, layouts, dp, pp);
  CHECK(plan.ok()) << job << " --layouts " << layouts << ": " << plan.status();
  EXPECT_TRUE(CheckEmittedPlan(*plan).ok()) << CheckEmittedPlan(*plan);
  return std::move(plan).value();
}

// Register name (without "@device") -> layout, for the registers of device 0.
std::map<std::string, proto::Layout> Layouts(const proto::Plan& plan) {
  std::map<std::string, proto::Layout> layouts;
  for (const proto::RegisterDef& reg : plan.register_def()) {
    layouts[reg.name().substr(0, reg.name().find('@'))] = reg.tensor().layout();
  }
  return layouts;
}

std::vector<const proto::ActorDef*> Reorders(const proto::Plan& plan) {
  std::vector<const proto::ActorDef*> reorders;
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.kernel().op_type() == "reorder") reorders.push_back(&actor);
  }
  return reorders;
}

// The kernels with code for layouts other than plain (docs/OPS.md, "Layouts").
bool ReadsLayouts(const std::string& op) {
  static const std::set<std::string> ops = {"conv2d",
                                            "conv2d_grad_input",
                                            "conv2d_grad_filter",
                                            "batch_norm",
                                            "batch_norm_grad",
                                            "batch_norm_statistics",
                                            "global_avg_pool",
                                            "global_avg_pool_grad",
                                            "max_pool2d",
                                            "max_pool2d_grad",
                                            "avg_pool2d",
                                            "avg_pool2d_grad",
                                            "reorder",
                                            "relu",
                                            "relu_grad",
                                            "gelu",
                                            "gelu_grad",
                                            "add",
                                            "sub",
                                            "mul",
                                            "add_n",
                                            "identity",
                                            "scale",
                                            "cast",
                                            "copy"};
  return ops.count(op) > 0;
}

void ExpectOnlyLayoutKernelsSeeLayouts(const proto::Plan& plan) {
  for (const proto::ActorDef& actor : plan.actor()) {
    bool laid_out = false;
    for (const proto::TensorDesc& desc : actor.kernel().input()) {
      laid_out |= desc.layout() != proto::LAYOUT_PLAIN;
    }
    for (const proto::TensorDesc& desc : actor.kernel().output()) {
      laid_out |= desc.layout() != proto::LAYOUT_PLAIN;
    }
    if (laid_out) {
      EXPECT_TRUE(ReadsLayouts(actor.kernel().op_type())) << actor.name();
    }
    // Kernel descriptors say what the registers hold (those the kernel reads: an ordering
    // input, last, has none; plan/ordering_inputs.h).
    for (int i = 0; i < plan::KernelInputCount(actor); ++i) {
      EXPECT_EQ(actor.kernel().input(i).layout(),
                plan.register_def(static_cast<int>(actor.input_register(i))).tensor().layout())
          << actor.name() << " input " << i;
    }
  }
  // The job's boundaries stay plain: variables, sources and what sinks report.
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.kind() == proto::ACTOR_KIND_VARIABLE || actor.kind() == proto::ACTOR_KIND_SOURCE) {
      for (int64_t reg : actor.output_register()) {
        EXPECT_EQ(plan.register_def(static_cast<int>(reg)).tensor().layout(), proto::LAYOUT_PLAIN)
            << actor.name();
      }
    }
  }
}

TEST(ChooseLayouts, ForcedNChw16cLaysResNetActivationsOutWithoutAReorder) {
  const proto::Plan plan = Compile("resnet_tiny", "nChw16c");
  std::map<std::string, proto::Layout> layouts = Layouts(plan);
  for (const char* name :
       {"stem.conv.y", "stem.bn.y", "stem.relu.y", "b1.conv1.y", "b1.sum", "b1.relu2.y",
        "b2.conv1.y", "b2.shortcut.y", "b2.bn_shortcut.y", "b2.relu2.y"}) {
    EXPECT_EQ(layouts.at(name), proto::LAYOUT_NCHW16C) << name;
  }
  // The input has 3 channels (16 do not divide them): the first convolution reads it plain.
  EXPECT_EQ(layouts.at("x"), proto::LAYOUT_PLAIN);
  EXPECT_EQ(layouts.at("features"), proto::LAYOUT_PLAIN);
  EXPECT_EQ(layouts.at("logits"), proto::LAYOUT_PLAIN);
  // Gradients between the convolutions too.
  int gradients = 0;
  for (const auto& [name, layout] : layouts) {
    if (name.find("grad") != std::string::npos && layout == proto::LAYOUT_NCHW16C) ++gradients;
  }
  EXPECT_GT(gradients, 10);
  EXPECT_TRUE(Reorders(plan).empty());
  ExpectOnlyLayoutKernelsSeeLayouts(plan);
}

TEST(ChooseLayouts, NchwKeepsEveryTensorPlain) {
  const proto::Plan plan = Compile("resnet_tiny", "nchw");
  for (const auto& [name, layout] : Layouts(plan)) EXPECT_EQ(layout, proto::LAYOUT_PLAIN) << name;
  EXPECT_TRUE(Reorders(plan).empty());
}

TEST(ChooseLayouts, AutoChoosesNhwcAndReordersOnlyTheInputAtTheJobsBoundary) {
  // The measured factors make NHWC the cheapest for ResNet's convolutions; the 3-channel input
  // fits it too, so the one reorder is the job's input.
  const proto::Plan plan = Compile("resnet_tiny", "auto");
  std::map<std::string, proto::Layout> layouts = Layouts(plan);
  EXPECT_EQ(layouts.at("x"), proto::LAYOUT_PLAIN);
  EXPECT_EQ(layouts.at("stem.relu.y"), proto::LAYOUT_NHWC);
  EXPECT_EQ(layouts.at("b2.sum"), proto::LAYOUT_NHWC);
  const std::vector<const proto::ActorDef*> reorders = Reorders(plan);
  ASSERT_EQ(reorders.size(), 1u);
  EXPECT_EQ(plan.register_def(static_cast<int>(reorders[0]->input_register(0))).name(), "x");
  EXPECT_EQ(reorders[0]->kernel().output(0).layout(), proto::LAYOUT_NHWC);
  ExpectOnlyLayoutKernelsSeeLayouts(plan);
}

TEST(ChooseLayouts, TensorsTheLayoutDoesNotFitStayPlain) {
  // The small CNN's first block has 8 channels: only the second convolution's 16 take nChw16c;
  // the 8-channel tensors (through max_pool2d) stay in NCHW.
  const proto::Plan plan = Compile("cnn", "nChw16c");
  std::map<std::string, proto::Layout> layouts = Layouts(plan);
  EXPECT_EQ(layouts.at("c1"), proto::LAYOUT_PLAIN);
  EXPECT_EQ(layouts.at("a1"), proto::LAYOUT_PLAIN);
  EXPECT_EQ(layouts.at("p1"), proto::LAYOUT_PLAIN);
  EXPECT_EQ(layouts.at("c2"), proto::LAYOUT_NCHW16C);
  EXPECT_EQ(layouts.at("a2"), proto::LAYOUT_NCHW16C);
  EXPECT_TRUE(Reorders(plan).empty());
  ExpectOnlyLayoutKernelsSeeLayouts(plan);
}

TEST(ChooseLayouts, BoxingMovesPlainTensorsOnly) {
  // Data parallel: batch_norm_statistics reads x split on channels, so each batch_norm input
  // is reordered to NCHW next to its producer before the all-to-all.
  const proto::Plan dp = Compile("resnet_tiny", "nChw16c", 2);
  ExpectOnlyLayoutKernelsSeeLayouts(dp);
  EXPECT_FALSE(Reorders(dp).empty());
  for (const proto::ActorDef& actor : dp.actor()) {
    if (actor.kind() != proto::ACTOR_KIND_BOXING && actor.kind() != proto::ACTOR_KIND_COPY) {
      continue;
    }
    for (int64_t reg : actor.input_register()) {
      EXPECT_EQ(dp.register_def(static_cast<int>(reg)).tensor().layout(), proto::LAYOUT_PLAIN)
          << actor.name();
    }
  }
  const proto::Plan pp = Compile("resnet_tiny", "nChw16c", 1, 2);
  ExpectOnlyLayoutKernelsSeeLayouts(pp);
}

TEST(ChooseLayouts, ExplainShowsEachRegionsLayoutAndSaving) {
  StatusOr<JobFile> file = ParseJobFile("tests/compiler/jobs/resnet_tiny.pbtxt");
  ASSERT_TRUE(file.ok()) << file.status();
  StatusOr<std::string> text = ExplainPlacement(*file, CompileOptions());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("layouts (--layouts auto): 1 region of convolutions, 1 reorder op"));
  EXPECT_THAT(*text, HasSubstr("nhwc chosen by the cost model"));
  EXPECT_THAT(*text, HasSubstr("saves"));
}

TEST(ChooseLayouts, RejectsAnUnknownLayout) {
  StatusOr<proto::Plan> plan = CompileWith("resnet_tiny", "nChw8c");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("--layouts: unknown layout 'nChw8c'"));
}

// Reference runs (2 steps: the reference's double convolutions are slow): the same losses and
// weights with and without layouts.
reference::ReferenceResult RunReference(const proto::Plan& plan) {
  reference::ReferenceOptions options;
  options.steps = 2;
  StatusOr<reference::ReferenceResult> result = reference::RunReferencePlan(plan, options);
  CHECK(result.ok()) << result.status();
  return std::move(result).value();
}

void ExpectSameRun(const proto::Plan& actual, const reference::ReferenceResult& want,
                   double tolerance) {
  const reference::ReferenceResult got = RunReference(actual);
  ASSERT_EQ(got.steps.size(), want.steps.size());
  for (size_t step = 0; step < want.steps.size(); ++step) {
    EXPECT_NEAR(got.steps[step].loss, want.steps[step].loss,
                tolerance * std::fabs(want.steps[step].loss))
        << "step " << step;
  }
  for (const auto& [name, tensor] : want.variables) {
    const std::vector<double>& values = got.variables.at(name).values;
    ASSERT_EQ(values.size(), tensor.values.size()) << name;
    for (size_t e = 0; e < values.size(); ++e) {
      ASSERT_NEAR(values[e], tensor.values[e],
                  tolerance * std::max(1.0, std::fabs(tensor.values[e])))
          << name << " element " << e;
    }
  }
}

TEST(ChooseLayouts, PlansWithLayoutsComputeWhatPlainPlansCompute) {
  for (const char* job : {"resnet_tiny", "cnn"}) {
    const reference::ReferenceResult plain = RunReference(Compile(job, "nchw"));
    for (const char* layouts : {"auto", "nhwc", "nChw16c"}) {
      SCOPED_TRACE(std::string(job) + " --layouts " + layouts);
      ExpectSameRun(Compile(job, layouts), plain, 0);
    }
  }
}

TEST(ChooseLayouts, ParallelPlansWithLayoutsComputeWhatOneDeviceComputes) {
  // pp 2 and dp 2 with layouts against one device without: the reference holds every tensor in
  // NCHW order, so only the order of sums across devices differs (1e-9, the bound of
  // compiler_parallel_equivalence_test). dp 2 normalises each device's half of a micro-batch
  // (docs/OPS.md, batch_norm), so it is compared with dp 2 without layouts.
  ExpectSameRun(Compile("resnet_tiny", "nhwc", 1, 2), RunReference(Compile("resnet_tiny", "nchw")),
                1e-9);
  ExpectSameRun(Compile("resnet_tiny", "nChw16c", 2, 1),
                RunReference(Compile("resnet_tiny", "nchw", 2, 1)), 1e-9);
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
