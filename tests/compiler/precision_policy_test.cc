// The precision policy (docs/PRECISION.md) on the example jobs: which tensor gets which type,
// casts once per tensor and variables' casts once per step, float32 master copies, and how
// --precision, the job's field and `auto` choose.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "base/file.h"
#include "compiler/compiler.h"
#include "compiler/emitted_plan_check.h"
#include "compiler/testing/compiler_test_util.h"
#include "placement/cluster_spec.h"
#include "plan/ordering_inputs.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::HasSubstr;

std::string ExampleText(const std::string& name) {
  StatusOr<std::string> text = ReadFile("tests/compiler/jobs/" + name + ".pbtxt");
  CHECK(text.ok()) << text.status();
  return *text;
}

proto::Plan Compile(const std::string& text, proto::Precision precision,
                    const std::string& cluster = "", int dp = 0, int tp = 0) {
  CompileOptions options;
  options.precision = precision;
  if (!cluster.empty()) {
    StatusOr<proto::Cluster> spec = placement::LoadClusterSpec(cluster);
    CHECK(spec.ok()) << spec.status();
    options.cluster = *spec;
  }
  if (dp > 0) options.parallel.set_data_parallel(dp);
  if (tp > 0) options.parallel.set_tensor_parallel(tp);
  StatusOr<proto::Plan> plan = CompileJobText(text, options);
  CHECK(plan.ok()) << plan.status();
  return std::move(plan).value();
}

bool IsBf16(const proto::TensorDesc& desc) {
  return desc.dtype() == proto::DATA_TYPE_BFLOAT16;
}

bool IsProduct(const proto::ActorDef& actor) {
  return actor.kernel().op_type() == "matmul" || actor.kernel().op_type() == "batch_matmul";
}

// Ops that may hold bfloat16 tensors: products read them, casts make them, reshapes and
// transfers move them.
bool MayTouchBf16(const proto::ActorDef& actor) {
  // A fused actor (op fusion) writes the bf16 copy its cast makes.
  static const std::set<std::string> kinds = {"matmul",     "batch_matmul", "cast",  "fused",
                                              "reshape",    "copy",         "slice", "assemble",
                                              "flat_split", "flat_concat"};
  return kinds.count(actor.kernel().op_type()) > 0;
}

// A cast, or a fused actor (op fusion, docs/OPS.md "fused") whose program casts.
bool MakesBf16Copies(const proto::ActorDef& actor) {
  const proto::KernelDef& kernel = actor.kernel();
  if (kernel.op_type() == "cast") return true;
  if (kernel.op_type() != "fused") return false;
  for (const proto::Attribute& attribute : kernel.attr()) {
    if (attribute.name() == "program") return attribute.string().find("cast(") != std::string::npos;
  }
  return false;
}

const proto::ActorDef& ProducerOf(const proto::Plan& plan, int64_t register_id) {
  return plan.actor(plan.register_def(register_id).producer());
}

void ExpectTheBf16Policy(const proto::Plan& plan) {
  EXPECT_TRUE(CheckEmittedPlan(plan).ok()) << CheckEmittedPlan(plan);
  EXPECT_EQ(plan.precision(), proto::PRECISION_BF16);
  int products = 0;
  std::map<int64_t, int> casts_reading;  // Register -> cast actors reading it.
  for (const proto::ActorDef& actor : plan.actor()) {
    SCOPED_TRACE(actor.name());
    const proto::KernelDef& kernel = actor.kernel();
    if (IsProduct(actor)) {
      ++products;
      ASSERT_EQ(kernel.input_size(), 2);
      EXPECT_TRUE(IsBf16(kernel.input(0)) && IsBf16(kernel.input(1)));
      EXPECT_EQ(kernel.output(0).dtype(), proto::DATA_TYPE_FLOAT32);  // Accumulated in float32.
    } else if (actor.kind() == proto::ACTOR_KIND_UPDATE) {
      // The optimizer updates float32; a third input is the bf16 copy it writes for the next
      // step (fold_weight_casts).
      for (int k = 0; k < kernel.input_size(); ++k) EXPECT_EQ(IsBf16(kernel.input(k)), k == 2);
    } else if (!MayTouchBf16(actor)) {
      // softmax, layer norm, losses, reductions, accumulation: float32.
      for (const proto::TensorDesc& desc : kernel.input()) EXPECT_FALSE(IsBf16(desc));
      for (const proto::TensorDesc& desc : kernel.output()) EXPECT_FALSE(IsBf16(desc));
    }
    if (kernel.op_type() == "cast") {
      ++casts_reading[actor.input_register(0)];
      const proto::ActorDef& source = ProducerOf(plan, actor.input_register(0));
      if (source.kind() == proto::ACTOR_KIND_VARIABLE) {
        // The bf16 copy of a weight is made once per step, not once per micro-batch.
        EXPECT_EQ(actor.period(), plan.schedule().pieces_per_step());
        EXPECT_EQ(actor.firings(), plan.schedule().steps());
      }
    }
  }
  EXPECT_GT(products, 0);
  for (const auto& [register_id, count] : casts_reading) {
    EXPECT_EQ(count, 1) << plan.register_def(register_id).name() << " is cast more than once";
  }
  // Master copies: every variable and what the optimizer reads is float32.
  for (const proto::PlanVariable& variable : plan.variable()) {
    EXPECT_EQ(variable.tensor().dtype(), proto::DATA_TYPE_FLOAT32) << variable.name();
    for (const proto::VariablePart& part : variable.part()) {
      EXPECT_FALSE(IsBf16(plan.register_def(part.register_id()).tensor())) << variable.name();
    }
  }
}

TEST(PrecisionPolicy, Float32IsTheDefaultAndChangesNothing) {
  for (const std::string name : {"mlp", "transformer"}) {
    SCOPED_TRACE(name);
    const proto::Plan unspecified = Compile(ExampleText(name), proto::PRECISION_UNSPECIFIED);
    const proto::Plan float32 = Compile(ExampleText(name), proto::PRECISION_FLOAT32);
    EXPECT_EQ(unspecified.precision(), proto::PRECISION_FLOAT32);
    EXPECT_EQ(DumpPlan(unspecified), DumpPlan(float32));
    for (const proto::RegisterDef& reg : unspecified.register_def()) {
      EXPECT_FALSE(IsBf16(reg.tensor())) << reg.name();
    }
    for (const proto::ActorDef& actor : unspecified.actor()) {
      EXPECT_NE(actor.kernel().op_type(), "cast") << actor.name();
    }
    EXPECT_THAT(SummarizePlan(unspecified), ::testing::Not(HasSubstr("precision")));
  }
}

TEST(PrecisionPolicy, Bf16ProductsReadBFloat16CopiesAndEverythingElseStaysFloat32) {
  ExpectTheBf16Policy(Compile(ExampleText("mlp"), proto::PRECISION_BF16));
  ExpectTheBf16Policy(Compile(ExampleText("transformer"), proto::PRECISION_BF16));
}

// Activations between convolutions (compiler/passes/activation_precision.h): on the small
// ResNet every image tensor that convolutions, batch_norm, relu and add pass between them is
// bfloat16, the weight gradients and the optimizer float32, and the only casts left are the
// job's boundaries (the input batch, the pooled features and their gradient, the classifier)
// and the weights' once-per-step copies.
TEST(PrecisionPolicy, ActivationsBetweenConvolutionsStayBf16AndCastsAreLeftOnlyAtTheBoundaries) {
  const proto::Plan plan = Compile(ExampleText("resnet_tiny"), proto::PRECISION_BF16);
  EXPECT_TRUE(CheckEmittedPlan(plan).ok()) << CheckEmittedPlan(plan);
  static const std::set<std::string> between = {
      "batch_norm", "batch_norm_grad", "relu", "relu_grad", "add", "add_n"};
  int bf16_images = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    SCOPED_TRACE(actor.name());
    const proto::KernelDef& kernel = actor.kernel();
    const std::string& op = kernel.op_type();
    if (op == "conv2d" || op == "conv2d_grad_input") {
      EXPECT_TRUE(IsBf16(kernel.output(0)));
      EXPECT_TRUE(IsBf16(kernel.input(0)) && IsBf16(kernel.input(1)));
    } else if (op == "conv2d_grad_filter") {
      EXPECT_TRUE(IsBf16(kernel.input(0)) && IsBf16(kernel.input(1)));
      EXPECT_FALSE(IsBf16(kernel.output(0)));  // Weight gradients stay float32.
    } else if (between.count(op) > 0 && kernel.output(0).dims_size() == 4) {
      EXPECT_TRUE(IsBf16(kernel.output(0)));
      ++bf16_images;
      // batch_norm's gamma, beta and batch_norm_grad's dgamma, dbeta: float32.
      for (const proto::TensorDesc& desc : kernel.input()) {
        if (desc.dims_size() == 1) {
          EXPECT_FALSE(IsBf16(desc));
        }
      }
      for (int k = 1; k < kernel.output_size(); ++k) EXPECT_FALSE(IsBf16(kernel.output(k)));
    } else if (actor.kind() == proto::ACTOR_KIND_UPDATE || op == "batch_norm_statistics") {
      for (const proto::TensorDesc& desc : kernel.output()) EXPECT_FALSE(IsBf16(desc));
    }
    if (op != "cast") continue;
    // Every cast is a boundary: of a variable (once per step), of the input batch, of the
    // rank-2 classifier side, or the pooling gradient spread over the last images.
    const proto::ActorDef& source = ProducerOf(plan, actor.input_register(0));
    const std::string& source_op = source.kernel().op_type();
    const bool boundary = source.kind() == proto::ACTOR_KIND_VARIABLE ||
                          source.kind() == proto::ACTOR_KIND_SOURCE ||
                          kernel.input(0).dims_size() != 4 || source_op == "global_avg_pool_grad" ||
                          source_op == "reorder";
    EXPECT_TRUE(boundary) << "casts " << plan.register_def(actor.input_register(0)).name()
                          << " written by " << source.name();
    EXPECT_TRUE(IsBf16(kernel.output(0))) << "a float32 cast is left between convolutions";
  }
  EXPECT_GE(bf16_images, 10);
  // Float32 keeps every activation float32, as before.
  const proto::Plan float32 = Compile(ExampleText("resnet_tiny"), proto::PRECISION_FLOAT32);
  for (const proto::ActorDef& actor : float32.actor()) {
    for (const proto::TensorDesc& desc : actor.kernel().output()) EXPECT_FALSE(IsBf16(desc));
  }
}

// A reader that takes float32 only (max_pool2d after the CNN's second relu) reads one float32
// cast of the bf16 activation, named after it; --explain names every bf16 activation and why.
TEST(PrecisionPolicy, ReadersThatTakeFloat32OnlyReadOneFloat32CastOfABf16Activation) {
  const proto::Plan plan = Compile(ExampleText("cnn"), proto::PRECISION_BF16);
  int float32_casts = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.kernel().op_type() != "cast" || IsBf16(actor.kernel().output(0))) continue;
    ++float32_casts;
    EXPECT_TRUE(IsBf16(actor.kernel().input(0))) << actor.name();
    EXPECT_NE(actor.name().find(".float32"), std::string::npos) << actor.name();
  }
  EXPECT_GE(float32_casts, 1);
  CompileOptions options;
  options.precision = proto::PRECISION_BF16;
  StatusOr<JobFile> job = ParseJobFile("tests/compiler/jobs/resnet_tiny.pbtxt");
  ASSERT_TRUE(job.ok()) << job.status();
  StatusOr<std::string> explained = ExplainPlacement(*job, options);
  ASSERT_TRUE(explained.ok()) << explained.status();
  EXPECT_THAT(*explained, HasSubstr("activations between convolutions stored in bfloat16"));
  EXPECT_THAT(*explained, HasSubstr("(bf16 output)"));
  EXPECT_THAT(*explained, HasSubstr("between convolutions (float32 inside)"));
}

TEST(PrecisionPolicy, TheBackwardPassKeepsTheBf16CopyOfAnActivation) {
  const proto::Plan plan = Compile(ExampleText("mlp"), proto::PRECISION_BF16);
  // fc2 reads a1 forward, and its weight gradient reads a1 again: both read a1's one bf16 copy,
  // so what waits for the backward pass is the bf16 copy (half the bytes). fc2 runs its bias,
  // relu and cast in its epilogue (docs/OPS.md "fused"); its first input is still a1's copy.
  const proto::ActorDef* forward = FindActor(plan, "fc2+fc2_bias+relu2+a2.bf16");
  const proto::ActorDef* weight_gradient = FindActor(plan, "fc2.grad_b");
  ASSERT_NE(forward, nullptr);
  ASSERT_NE(weight_gradient, nullptr);
  const std::string a1_copy = plan.register_def(forward->input_register(0)).name();
  EXPECT_EQ(a1_copy, "a1.bf16");
  bool reads_copy = false;
  for (int64_t id : weight_gradient->input_register()) {
    reads_copy |= plan.register_def(id).name() == a1_copy;
    EXPECT_NE(plan.register_def(id).name(), "a1");
  }
  EXPECT_TRUE(reads_copy);
  // The transformer's rank-3 products flatten their input for the weight gradient: the
  // flattening reads the bf16 copy (as a view, fold_views, or as a reshape of it) instead of
  // making a second one. So every tensor is cast once, and every product's bf16 input is a
  // cast's output (a cast of its own, or one a fused actor holds).
  const proto::Plan transformer = Compile(ExampleText("transformer"), proto::PRECISION_BF16);
  std::map<int64_t, int> casts_of;  // Source register -> casts that read it.
  int bf16_product_inputs = 0;
  for (const proto::ActorDef& actor : transformer.actor()) {
    const std::string& op = actor.kernel().op_type();
    if (op == "cast") ++casts_of[actor.input_register(0)];
    if (op == "reshape" && IsBf16(actor.kernel().input(0))) {
      EXPECT_TRUE(MakesBf16Copies(ProducerOf(transformer, actor.input_register(0))));
    }
    if ((op == "matmul" || op == "batch_matmul") && IsBf16(actor.kernel().input(0))) {
      // The registers it reads; not its ordering inputs (a weight gradient it waits for).
      for (int k = 0; k < plan::KernelInputCount(actor); ++k) {
        const int64_t id = actor.input_register(k);
        EXPECT_TRUE(MakesBf16Copies(ProducerOf(transformer, id))) << actor.name();
        ++bf16_product_inputs;
      }
    }
  }
  for (const auto& [source, casts] : casts_of) {
    EXPECT_EQ(casts, 1) << transformer.register_def(source).name() << " is cast " << casts
                        << " times";
  }
  EXPECT_GT(bf16_product_inputs, 0);
}

TEST(PrecisionPolicy, EveryBf16CopyHoldsHalfTheBytesOfItsSource) {
  const proto::Plan float32 = Compile(ExampleText("transformer"), proto::PRECISION_FLOAT32);
  const proto::Plan bf16 = Compile(ExampleText("transformer"), proto::PRECISION_BF16);
  // Not asserted to shrink in total: on this small job the casts' outputs may cost more than
  // they save; what must hold is that every bf16 register is half its float32 source.
  for (const proto::ActorDef& actor : bf16.actor()) {
    if (actor.kernel().op_type() != "cast") continue;
    const int64_t in = bf16.register_def(actor.input_register(0)).bytes_per_slot();
    const int64_t out = bf16.register_def(actor.output_register(0)).bytes_per_slot();
    EXPECT_LE(out, in / 2 + 64) << actor.name();
  }
  EXPECT_GT(float32.device(0).planned_bytes(), 0);
}

TEST(PrecisionPolicy, AutoPicksBf16ExactlyWhereTheCpuHasNativeBf16) {
  const std::string text = ExampleText("mlp");
  CompileOptions options;
  options.precision = proto::PRECISION_AUTO;
  options.native_bf16 = false;
  StatusOr<proto::Plan> without = CompileJobText(text, options);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->precision(), proto::PRECISION_FLOAT32);
  EXPECT_THAT(without->precision_reason(), HasSubstr("auto"));
  EXPECT_THAT(SummarizePlan(*without),
              HasSubstr("precision: float32 (auto: native bf16 ruled out)"));
  options.native_bf16 = true;
  StatusOr<proto::Plan> with = CompileJobText(text, options);
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_EQ(with->precision(), proto::PRECISION_BF16);
  ExpectTheBf16Policy(*with);
}

TEST(PrecisionPolicy, TheFlagWinsOverTheJobsField) {
  const std::string text = ExampleText("mlp") + "\nprecision: PRECISION_BF16\n";
  const proto::Plan from_job = Compile(text, proto::PRECISION_UNSPECIFIED);
  EXPECT_EQ(from_job.precision(), proto::PRECISION_BF16);
  EXPECT_EQ(from_job.precision_reason(), "the job's precision");
  EXPECT_THAT(SummarizePlan(from_job), HasSubstr("precision: bf16 (the job's precision)"));
  EXPECT_THAT(SummarizePlan(from_job), HasSubstr("w1.bf16 [bf16]"));
  const proto::Plan overridden = Compile(text, proto::PRECISION_FLOAT32);
  EXPECT_EQ(overridden.precision(), proto::PRECISION_FLOAT32);
  EXPECT_EQ(overridden.precision_reason(), "--precision float32");
}

TEST(PrecisionPolicy, TheCostModelTimesBf16ProductsAtTheDevicesBf16Rate) {
  CompileOptions options;
  options.cluster = *placement::ParseClusterShorthand("1cpu", 1);
  proto::DeviceSpec* device = options.cluster.mutable_node(0)->mutable_device(0);
  device->set_flops(1e9);
  device->set_bf16_flops(4e9);
  device->set_memory_bandwidth(1e30);  // Only the flops count.
  std::map<std::string, double> seconds[2];
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    options.precision = bf16 ? proto::PRECISION_BF16 : proto::PRECISION_FLOAT32;
    StatusOr<proto::Plan> plan = CompileJobText(ExampleText("mlp"), options);
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const proto::ActorDef& actor : plan->actor()) {
      if (IsProduct(actor)) seconds[bf16][actor.name()] = actor.estimated_seconds();
    }
  }
  ASSERT_FALSE(seconds[0].empty());
  ASSERT_EQ(seconds[0].size(), seconds[1].size());
  for (const auto& [name, float32_seconds] : seconds[0]) {
    SCOPED_TRACE(name);
    ASSERT_EQ(seconds[1].count(name), 1u);
    EXPECT_GT(float32_seconds, 0);
    EXPECT_NEAR(seconds[1][name] * 4, float32_seconds, 1e-9 * float32_seconds);
  }
}

// One decision: the cpu's bf16 rate in the cost model follows CompileOptions::native_bf16, as
// `--precision auto` does, whatever this machine's cpu has.
TEST(PrecisionPolicy, TheCpuBf16RateFollowsTheSameDecisionAsAuto) {
  for (bool native : {false, true}) {
    SCOPED_TRACE(native ? "native bf16 assumed" : "native bf16 ruled out");
    CompileOptions options;
    options.cluster = *placement::ParseClusterShorthand("1cpu", 1);
    proto::DeviceSpec* device = options.cluster.mutable_node(0)->mutable_device(0);
    device->set_flops(1e9);
    device->set_memory_bandwidth(1e30);  // Only the flops count.
    options.native_bf16 = native;
    std::map<std::string, double> seconds[2];
    for (int bf16 = 0; bf16 < 2; ++bf16) {
      options.precision = bf16 ? proto::PRECISION_BF16 : proto::PRECISION_FLOAT32;
      StatusOr<proto::Plan> plan = CompileJobText(ExampleText("mlp"), options);
      ASSERT_TRUE(plan.ok()) << plan.status();
      for (const proto::ActorDef& actor : plan->actor()) {
        if (IsProduct(actor)) seconds[bf16][actor.name()] = actor.estimated_seconds();
      }
    }
    ASSERT_FALSE(seconds[0].empty());
    for (const auto& [name, float32_seconds] : seconds[0]) {
      SCOPED_TRACE(name);
      const double speedup = native ? 2 : 1;
      EXPECT_NEAR(seconds[1][name] * speedup, float32_seconds, 1e-9 * float32_seconds);
    }
    options.precision = proto::PRECISION_AUTO;
    StatusOr<proto::Plan> automatic = CompileJobText(ExampleText("mlp"), options);
    ASSERT_TRUE(automatic.ok()) << automatic.status();
    EXPECT_EQ(automatic->precision(), native ? proto::PRECISION_BF16 : proto::PRECISION_FLOAT32);
  }
}

TEST(PrecisionPolicy, HoldsUnderDataAndTensorParallelism) {
  ExpectTheBf16Policy(Compile(ExampleText("mlp"), proto::PRECISION_BF16, "2cpu", 2, 0));
  ExpectTheBf16Policy(Compile(ExampleText("mlp"), proto::PRECISION_BF16, "2cpu", 0, 2));
  ExpectTheBf16Policy(Compile(ExampleText("transformer"), proto::PRECISION_BF16, "2cpu", 0, 2));
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
