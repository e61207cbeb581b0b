// Ordering edges for weight-gradient products (order_weight_gradients_pass.cc; docs/PROTOCOL.md,
// "Ordering inputs"): which actors wait for which products, that every layout (dp, tp, pp, their
// mix, micro-batch accumulation, bf16, unfused) compiles with them (so the deadlock check and the
// emitted-plan check pass) and trains to the very losses and weights of the plan without them
// (bit for bit in the reference interpreter: no kernel sees an ordering input, and no sum changes
// its order), and that they let the bench jobs plan fewer bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "compiler/compiler.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"
#include "plan/ordering_inputs.h"
#include "reference/interpreter/reference_interpreter.h"

namespace softwire {
namespace compiler {
namespace {

struct Setting {
  const char* name;
  int dp = 1;
  int tp = 1;
  int pp = 1;
  int micro_batches = 0;  // 0: the job's.
  bool bf16 = false;
  bool fusion = true;
};

void PrintTo(const Setting& setting, std::ostream* out) {
  *out << setting.name;
}

proto::Plan Compile(const std::string& path, const Setting& setting, bool ordering_edges) {
  StatusOr<JobFile> file = ParseJobFile(path);
  CHECK(file.ok()) << file.status();
  CompileOptions options;
  const int devices = setting.dp * setting.tp * setting.pp;
  options.cluster = *placement::ParseClusterShorthand(std::to_string(devices) + "cpu", 8);
  options.parallel.set_data_parallel(setting.dp);
  options.parallel.set_tensor_parallel(setting.tp);
  options.parallel.set_pipeline_stages(setting.pp);
  options.micro_batches_per_step = setting.micro_batches;
  if (setting.bf16) {
    options.precision = proto::PRECISION_BF16;
    options.native_bf16 = true;
  }
  options.fuse_elementwise = setting.fusion;
  options.ordering_edges = ordering_edges;
  StatusOr<proto::Plan> plan = CompileJob(*file, options);
  CHECK(plan.ok()) << path << " " << setting.name << ": " << plan.status();
  return std::move(plan).value();
}

// (producer of the register waited for, actor waiting), by name.
std::set<std::pair<std::string, std::string>> OrderingEdges(const proto::Plan& plan) {
  std::set<std::pair<std::string, std::string>> edges;
  for (const proto::ActorDef& actor : plan.actor()) {
    for (int k = plan::KernelInputCount(actor); k < actor.input_register_size(); ++k) {
      const proto::RegisterDef& reg = plan.register_def(static_cast<int>(actor.input_register(k)));
      edges.insert({plan.actor(static_cast<int>(reg.producer())).name(), actor.name()});
    }
  }
  return edges;
}

// mlp_tiny (tests/compiler/golden): the backward op after fc2's data-gradient product (relu1's
// gradient, or what it fused into) waits for fc2.grad_b; fc1's weight-gradient product is the
// last of the backward pass, so nothing waits for it. Off, no actor waits for anything.
TEST(OrderingEdges, TheOpAfterEachDataGradientWaitsForItsWeightGradient) {
  const std::string path = "tests/compiler/golden/mlp_tiny.pbtxt";
  const proto::Plan plan = Compile(path, {"one"}, true);
  const auto edges = OrderingEdges(plan);
  std::set<std::string> waited_for;
  for (const auto& [producer, waiting] : edges) {
    waited_for.insert(producer);
    const proto::ActorDef* actor = FindActor(plan, waiting);
    ASSERT_NE(actor, nullptr) << waiting;
    EXPECT_EQ(actor->kind(), proto::ACTOR_KIND_COMPUTE) << waiting;
    EXPECT_NE(waiting.find("grad"), std::string::npos) << waiting << " is not a backward op";
  }
  EXPECT_THAT(waited_for, ::testing::Contains(::testing::HasSubstr("fc2.grad_b")))
      << ::testing::PrintToString(edges);
  EXPECT_THAT(waited_for, ::testing::Not(::testing::Contains(::testing::HasSubstr("fc1.grad_b"))))
      << ::testing::PrintToString(edges);
  EXPECT_NE(DumpPlan(plan).find(" ordering only"), std::string::npos);
  EXPECT_TRUE(OrderingEdges(Compile(path, {"one"}, false)).empty());
}

// The reader of the loss gradient's seed (a fill of ones, which reads nothing and so could run
// a whole step ahead) waits for the loss: the backward pass starts after the forward pass, so the
// logits and the loss's inputs die before it, and the next step's seed-derived registers begin
// only after the loss of their own step. Where the seed and the loss fire at other periods (two
// micro-batches a step: the seed once a step) nothing is added.
TEST(OrderingEdges, TheBackwardPassStartsAfterTheLoss) {
  const auto edges = OrderingEdges(Compile("bench/training/mlp.pbtxt", {"one"}, true));
  EXPECT_THAT(edges,
              ::testing::Contains(std::pair<std::string, std::string>("loss", "loss.grad_x.scale")))
      << ::testing::PrintToString(edges);
  const auto accumulated =
      OrderingEdges(Compile("tests/compiler/golden/mlp_tiny.pbtxt", {"one"}, true));
  for (const auto& [producer, waiting] : accumulated) {
    EXPECT_EQ(producer.find("loss"), std::string::npos) << producer << " -> " << waiting;
  }
}

TEST(OrderingEdges, LetTheBenchJobsPlanFewerBytes) {
  for (const char* path : {"bench/training/mlp.pbtxt", "demos/charlm/charlm.pbtxt"}) {
    const int64_t with = Compile(path, {"one"}, true).device(0).planned_bytes();
    const int64_t without = Compile(path, {"one"}, false).device(0).planned_bytes();
    EXPECT_LT(with, without) << path;
  }
}

class OrderedPlan : public ::testing::TestWithParam<std::tuple<std::string, Setting>> {};

TEST_P(OrderedPlan, TrainsToTheUnorderedPlansLossesAndWeightsBitForBit) {
  const auto& [job, setting] = GetParam();
  const std::string path = "tests/compiler/jobs/" + job + ".pbtxt";
  const proto::Plan ordered = Compile(path, setting, true);
  const proto::Plan unordered = Compile(path, setting, false);
  ASSERT_FALSE(OrderingEdges(ordered).empty()) << job << " " << setting.name;
  reference::ReferenceOptions three_steps;
  three_steps.steps = 3;
  StatusOr<reference::ReferenceResult> expected =
      reference::RunReferencePlan(unordered, three_steps);
  ASSERT_TRUE(expected.ok()) << expected.status();
  StatusOr<reference::ReferenceResult> got = reference::RunReferencePlan(ordered, three_steps);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->steps.size(), expected->steps.size());
  for (size_t step = 0; step < expected->steps.size(); ++step) {
    for (const auto& [name, value] : expected->steps[step].outputs) {
      EXPECT_EQ(got->steps[step].outputs.at(name), value) << name << " at step " << step;
    }
  }
  ASSERT_EQ(got->variables.size(), expected->variables.size());
  for (const auto& [name, tensor] : expected->variables) {
    EXPECT_EQ(got->variables.at(name).values, tensor.values) << name;
  }
  EXPECT_NE(expected->steps.front().loss, expected->steps.back().loss);
}

const Setting kSettings[] = {
    {"one"},
    {"dp2", 2},
    {"tp2", 1, 2},
    {"pp2", 1, 1, 2},
    {"dp2_tp2_pp2", 2, 2, 2},
    {"micro_batches4", 1, 1, 1, 4},
    {"bf16", 1, 1, 1, 0, true},
    {"unfused", 1, 1, 1, 0, false, false},
};

INSTANTIATE_TEST_SUITE_P(Jobs, OrderedPlan,
                         ::testing::Combine(::testing::Values("mlp", "transformer"),
                                            ::testing::ValuesIn(kSettings)),
                         [](const ::testing::TestParamInfo<OrderedPlan::ParamType>& info) {
                           return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
                         });

}  // namespace
}  // namespace compiler
}  // namespace softwire
