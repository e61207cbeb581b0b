// CompileJob end to end on small jobs: the plan's protocol invariants and its training loop.
#include "compiler/compiler.h"

#include <gmock/gmock.h>
#include <google/protobuf/message.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "compiler/emitted_plan_check.h"
#include "compiler/testing/compiler_test_util.h"

namespace softwire {
namespace compiler {
namespace {

// Every string field of `message`, recursively (singular and repeated).
void CollectStrings(const google::protobuf::Message& message, std::vector<std::string>* strings) {
  const google::protobuf::Reflection* reflection = message.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const google::protobuf::FieldDescriptor* field : fields) {
    const bool repeated = field->is_repeated();
    const int count = repeated ? reflection->FieldSize(message, field) : 1;
    for (int i = 0; i < count; ++i) {
      if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_STRING) {
        strings->push_back(repeated ? reflection->GetRepeatedString(message, field, i)
                                    : reflection->GetString(message, field));
      } else if (field->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
        CollectStrings(repeated ? reflection->GetRepeatedMessage(message, field, i)
                                : reflection->GetMessage(message, field),
                       strings);
      }
    }
  }
}

using ::testing::HasSubstr;

const char kLinearJob[] = R"(
  name: "linear"
  source {
    name: "data"
    output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 6 }
    output { name: "labels" dtype: DATA_TYPE_INT32 }
    npy { path: ["data/x.npy", "data/labels.npy"] }
  }
  variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [6, 3]
             initializer { npy_path: "init/w.npy" } }
  variable { name: "b" dtype: DATA_TYPE_FLOAT32 dims: 3 frozen: true
             initializer { constant { value: 0.1 } } }
  op { name: "fc" type: "matmul" input: ["x", "w"] output: "h" }
  op { name: "bias" type: "bias_add" input: ["h", "b"] output: "logits" }
  op { name: "xent" type: "softmax_cross_entropy" input: ["logits", "labels"] output: "l" }
  op { name: "mean" type: "reduce_mean" input: "l" output: "loss" }
  op { name: "acc" type: "accuracy" input: ["logits", "labels"] output: "hits" }
  metric: "hits"
  train {
    loss: "loss"
    optimizer { sgd { learning_rate: 0.5 momentum: 0.9 } }
    steps: 3
    micro_batch_size: 8
    micro_batches_per_step: 4
  }
)";

proto::Plan Compile(const std::string& text, CompileOptions options = {}) {
  StatusOr<proto::Plan> plan = CompileJobText(text, std::move(options));
  CHECK(plan.ok()) << plan.status();
  return std::move(plan).value();
}

const proto::RegisterDef& OutputOf(const proto::Plan& plan, const std::string& actor) {
  return plan.register_def(FindActor(plan, actor)->output_register(0));
}

TEST(CompileJob, EmitsAPlanThatSatisfiesTheProtocolInvariants) {
  proto::Plan plan = Compile(kLinearJob);
  EXPECT_TRUE(CheckEmittedPlan(plan).ok()) << CheckEmittedPlan(plan);
  EXPECT_EQ(plan.job_name(), "linear");
  EXPECT_EQ(plan.schedule().steps(), 3);
  EXPECT_EQ(plan.schedule().pieces_per_step(), 4);
  EXPECT_EQ(plan.schedule().micro_batch_size(), 8);
}

// The check runs plan/'s actor kind rules, as the engines do; each rule has its own test in
// plan/actor_kind_rules_test.cc.
TEST(CompileJob, EmittedPlanCheckRejectsAnActorBreakingItsKindsRules) {
  proto::Plan plan = Compile(kLinearJob);
  const int64_t w = FindActor(plan, "w")->id();
  plan.mutable_actor(static_cast<int>(w))->mutable_variable()->clear_variable();
  EXPECT_EQ(CheckEmittedPlan(plan).message(),
            "actor 'w' (" + std::to_string(w) + "): variable actor names no variable");
}

TEST(CompileJob, GivesEachTrainableVariableAOneSlotRegisterItsUpdateWritesInPhaseOne) {
  proto::Plan plan = Compile(kLinearJob);
  const proto::ActorDef* variable = FindActor(plan, "w");
  ASSERT_NE(variable, nullptr);
  EXPECT_EQ(variable->kind(), proto::ACTOR_KIND_VARIABLE);
  EXPECT_EQ(variable->period(), 4);
  EXPECT_EQ(variable->firings(), 3);
  const proto::RegisterDef& w = OutputOf(plan, "w");
  EXPECT_EQ(w.slots(), 1);
  EXPECT_EQ(w.period(), 4);
  const proto::ActorDef* update = FindActor(plan, "w.update");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ(update->kind(), proto::ACTOR_KIND_UPDATE);
  EXPECT_EQ(update->period(), 4);
  EXPECT_EQ(plan.register_def(update->input_register(0)).name(), "w.grad_accumulated");
  EXPECT_EQ(update->input_register(1), w.id());
  for (const proto::RegisterConsumer& consumer : w.consumer()) {
    EXPECT_EQ(consumer.phase(), consumer.actor() == update->id() ? 1 : 0);
  }
  EXPECT_EQ(update->update().variable(), "w");
  EXPECT_DOUBLE_EQ(update->update().gradient_scale(), 0.25);
  EXPECT_DOUBLE_EQ(update->update().optimizer().sgd().momentum(), 0.9);
  EXPECT_EQ(update->state_bytes(), 4 * 6 * 3);
  EXPECT_EQ(update->kernel().op_type(), "sgd_update");
}

TEST(CompileJob, KeepsFrozenVariablesWithoutUpdateOrGradient) {
  proto::Plan plan = Compile(kLinearJob);
  EXPECT_NE(FindActor(plan, "b"), nullptr);
  EXPECT_EQ(FindActor(plan, "b.update"), nullptr);
  EXPECT_EQ(FindActor(plan, "bias.grad_bias"), nullptr);
  EXPECT_EQ(OutputOf(plan, "b").consumer_size(), 1);
  EXPECT_EQ(plan.variable_size(), 2);
}

TEST(CompileJob, AccumulatesEachGradientOverTheStepInOneSlot) {
  proto::Plan plan = Compile(kLinearJob);
  const proto::ActorDef* accumulate = FindActor(plan, "w.grad_accumulate");
  ASSERT_NE(accumulate, nullptr);
  EXPECT_EQ(accumulate->kind(), proto::ACTOR_KIND_ACCUMULATE);
  EXPECT_EQ(accumulate->period(), 1);
  EXPECT_EQ(accumulate->firings(), 12);
  EXPECT_EQ(OutputOf(plan, "w.grad_accumulate").period(), 4);
  EXPECT_EQ(OutputOf(plan, "w.grad_accumulate").slots(), 1);
  EXPECT_EQ(FindActor(plan, "loss.grad")->period(), 4);
}

// Slots of every output of the source actor `name`.
std::vector<int> SourceSlots(const proto::Plan& plan, const std::string& name) {
  const proto::ActorDef* source = FindActor(plan, name);
  CHECK(source != nullptr) << name;
  std::vector<int> slots;
  for (int64_t id : source->output_register()) slots.push_back(plan.register_def(id).slots());
  return slots;
}

TEST(CompileJob, GivesSourceOutputsOneSlotOnOneCpuDeviceWhereASecondBuysNoOverlap) {
  // One cpu device runs one kernel at a time: four pieces a step or one, the next fill only
  // moves on its strand.
  EXPECT_EQ(SourceSlots(Compile(kLinearJob), "data"), std::vector<int>({1, 1}));
  CompileOptions one_piece;
  one_piece.micro_batches_per_step = 1;
  EXPECT_EQ(SourceSlots(Compile(kLinearJob, one_piece), "data"), std::vector<int>({1, 1}));
  CompileOptions forced;
  forced.source_slots = 2;  // --source-slots 2: the former default, to compare.
  EXPECT_EQ(SourceSlots(Compile(kLinearJob, forced), "data"), std::vector<int>({2, 2}));
}

TEST(CompileJob, DoubleBuffersSourceOutputsWhereTheNextFillCanOverlapTheStep) {
  // A sim device's queues run asynchronously, as a cuda stream does: the host enqueues the next
  // fill while this piece's kernels run.
  CompileOptions sim;
  sim.cluster = ClusterNamedIn("# cluster: 1sim");
  EXPECT_EQ(SourceSlots(Compile(kLinearJob, sim), "data"), std::vector<int>({2, 2}));
  sim.source_slots = 1;
  EXPECT_EQ(SourceSlots(Compile(kLinearJob, sim), "data"), std::vector<int>({1, 1}));
  // Two cpu devices under dp: each source's device waits on the other's gradients in a step.
  CompileOptions data_parallel;
  data_parallel.cluster = ClusterNamedIn("# cluster: 2cpu");
  data_parallel.parallel.set_data_parallel(2);
  const proto::Plan plan = Compile(kLinearJob, data_parallel);
  int sources = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.kind() != proto::ACTOR_KIND_SOURCE) continue;
    ++sources;
    EXPECT_EQ(SourceSlots(plan, actor.name()), std::vector<int>({2, 2})) << actor.name();
  }
  EXPECT_GE(sources, 1);
}

TEST(CompileJob, AlignsSlots) {
  proto::Plan plan = Compile(kLinearJob);
  const proto::ActorDef* source = FindActor(plan, "data");
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->source().sample_begin(), 0);
  EXPECT_EQ(source->source().sample_end(), 8);
  for (const proto::RegisterDef& reg : plan.register_def()) {
    EXPECT_EQ(reg.bytes_per_slot() % 64, 0) << reg.name();
    EXPECT_EQ(reg.offset() % 64, 0) << reg.name();
  }
  // fc+bias: the matmul with the bias add in its epilogue (docs/OPS.md "fused").
  EXPECT_EQ(OutputOf(plan, "fc+bias").bytes_per_slot(), 128);  // 8 x 3 floats = 96 B.
}

TEST(CompileJob, KeepsDataAndInitializerPathsRelativeToTheJobDirectory) {
  StatusOr<JobFile> job = ParseJobText(kLinearJob, "jobs/linear.pbtxt", "/srv/jobs");
  ASSERT_TRUE(job.ok());
  CompileOptions options;
  options.cluster = OneCpuCluster();
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(FindActor(*plan, "data")->source().dataset().npy().path(1), "data/labels.npy");
  EXPECT_EQ(FindActor(*plan, "w")->variable().initializer().npy_path(), "init/w.npy");
  // No string of the plan names a directory of the compiling machine.
  std::vector<std::string> strings;
  CollectStrings(*plan, &strings);
  ASSERT_FALSE(strings.empty());
  for (const std::string& text : strings) {
    EXPECT_NE(text.rfind('/', 0), 0u) << "absolute path in the plan: " << text;
    EXPECT_EQ(text.find("/srv/jobs"), std::string::npos) << text;
  }
}

TEST(CompileJob, NormalisesDataPathsAndKeepsThoseWrittenAbsolute) {
  std::string text = kLinearJob;
  text.replace(text.find("\"data/x.npy\""), 12, "\"./data/../data/x.npy\"");
  text.replace(text.find("\"init/w.npy\""), 12, "\"/opt/weights/w.npy\"");
  StatusOr<JobFile> job = ParseJobText(text, "jobs/linear.pbtxt", "/srv/jobs");
  ASSERT_TRUE(job.ok()) << job.status();
  CompileOptions options;
  options.cluster = OneCpuCluster();
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(FindActor(*plan, "data")->source().dataset().npy().path(0), "data/x.npy");
  // Absolute as written: kept, and a confined data root refuses it (data/data_root.h).
  EXPECT_EQ(FindActor(*plan, "w")->variable().initializer().npy_path(), "/opt/weights/w.npy");
}

TEST(CompileJob, ReportsTheLossAndEveryMetricThroughSinks) {
  proto::Plan plan = Compile(kLinearJob);
  ASSERT_EQ(plan.output_size(), 2);
  EXPECT_EQ(plan.output(0).name(), "loss");
  EXPECT_TRUE(plan.output(0).is_loss());
  EXPECT_EQ(plan.actor(plan.output(0).sink_actor()).sink().output(), "loss");
  EXPECT_EQ(plan.output(1).name(), "hits");
  EXPECT_FALSE(plan.output(1).is_loss());
}

TEST(CompileJob, PlansRegistersThenStateAndSumsThemPerDevice) {
  proto::Plan plan = Compile(kLinearJob);
  const proto::PlanDevice& device = plan.device(0);
  EXPECT_EQ(device.planned_bytes(),
            device.register_bytes() + device.workspace_bytes() + device.state_bytes());
  EXPECT_EQ(device.workspace_bytes(), 0);
  EXPECT_EQ(device.state_bytes(), 128);  // 72 B of velocity, aligned.
  EXPECT_GE(FindActor(plan, "w.update")->state_offset(), device.register_bytes());
}

TEST(CompileJob, EstimatesSecondsFromFlopsAndBytes) {
  CompileOptions options;
  options.cluster = OneCpuCluster();
  options.cluster.mutable_node(0)->mutable_device(0)->set_flops(1e9);
  options.cluster.mutable_node(0)->mutable_device(0)->set_memory_bandwidth(1e9);
  options.fuse_epilogues = false;  // The matmul alone.
  proto::Plan plan = Compile(kLinearJob, options);
  // fc: 2 * 8 * 3 * 6 flops; (48 + 18 + 24) floats.
  EXPECT_DOUBLE_EQ(FindActor(plan, "fc")->estimated_seconds(), (288.0 + 360.0) / 1e9);
  // With the bias add in its epilogue: 24 flops more, and b (3 floats) read instead of h read
  // and written again (docs/OPS.md "fused").
  options.fuse_epilogues = true;
  proto::Plan fused = Compile(kLinearJob, options);
  EXPECT_DOUBLE_EQ(FindActor(fused, "fc+bias")->estimated_seconds(), (312.0 + 372.0) / 1e9);
}

// cuda devices have no `fused` kernel yet (docs/CUDA.md): their chains stay separate actors,
// while the same job on a cpu device fuses.
TEST(CompileJob, FusesNothingOnCudaDevices) {
  CompileOptions options;
  options.cluster = OneCpuCluster();
  EXPECT_NE(FindActor(Compile(kLinearJob, options), "fc+bias"), nullptr);
  options.cluster.mutable_node(0)->mutable_device(0)->set_kind(proto::DEVICE_KIND_CUDA);
  options.cluster.mutable_node(0)->mutable_device(0)->set_name("cuda:0");
  proto::Plan plan = Compile(kLinearJob, options);
  for (const proto::ActorDef& actor : plan.actor()) {
    EXPECT_NE(actor.kernel().op_type(), "fused") << actor.name();
  }
  EXPECT_NE(FindActor(plan, "fc"), nullptr);
}

// The memory figures below are of the plan without product epilogues, where fc's output h has
// a register of its own (docs/OPS.md "fused").
TEST(CompileJob, FailsWithTheBytesNeededWhenADeviceIsTooSmall) {
  CompileOptions options;
  options.cluster = OneCpuCluster(1024);
  options.fuse_epilogues = false;
  options.source_slots = 2;  // Two slots for fit_memory to lower.
  StatusOr<proto::Plan> plan = CompileJobText(kLinearJob, options);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kResourceExhausted);
  // 1472 bytes even with one slot per register (the source's 'x' and 'labels' lowered) and
  // lifetime-based reuse (1600 side by side); no activation to recompute, one device.
  EXPECT_THAT(plan.status().message(),
              HasSubstr("device 'node0/cpu:0': the plan needs at least 1472 bytes"));
  EXPECT_THAT(plan.status().message(),
              HasSubstr("; the fewest bytes came with fewer slots (2 lowered), recompute (0 of 0 "
                        "activations), of 1 compilation"));
  EXPECT_THAT(plan.status().message(), HasSubstr("but its memory budget is 1024 bytes"));
  EXPECT_THAT(plan.status().message(), HasSubstr("largest registers: 'x' 1 x 192 B"));
}

TEST(CompileJob, LowersSlotsLargestRegisterFirstToFitADevice) {
  // Two slots everywhere the plan wants them take 1600 + 192 + 64 bytes; 1800 fit once the
  // source's 192-byte 'x' keeps one slot.
  CompileOptions options;
  options.cluster = OneCpuCluster(1800);
  options.fuse_epilogues = false;
  options.source_slots = 2;  // Two slots for fit_memory to lower.
  proto::Plan plan = Compile(kLinearJob, options);
  const proto::ActorDef* source = FindActor(plan, "data");
  EXPECT_EQ(plan.register_def(source->output_register(0)).slots(), 1);
  EXPECT_EQ(plan.register_def(source->output_register(1)).slots(), 2);
  EXPECT_LE(plan.device(0).planned_bytes(), 1800);
}

TEST(CompileJob, RunsForwardOnlyJobsWithoutUpdates) {
  proto::Plan plan = Compile(R"(
    name: "inference"
    source { name: "data" output { name: "x" dtype: DATA_TYPE_FLOAT32 sample_dims: 4 }
             synthetic { seed: 3 } }
    variable { name: "w" dtype: DATA_TYPE_FLOAT32 dims: [4, 2]
               initializer { constant { value: 1 } } }
    op { name: "fc" type: "matmul" input: ["x", "w"] output: "y" }
    op { name: "total" type: "reduce_sum" input: "y" output: "sum" }
    metric: "sum"
    steps: 7
    micro_batch_size: 5
  )");
  EXPECT_EQ(plan.schedule().steps(), 7);
  EXPECT_EQ(plan.schedule().pieces_per_step(), 1);
  EXPECT_EQ(plan.schedule().micro_batch_size(), 5);
  EXPECT_EQ(plan.actor_size(), 5);  // data, w, fc, total, sum.sink
  EXPECT_EQ(FindActor(plan, "w")->firings(), 7);
  EXPECT_TRUE(CheckEmittedPlan(plan).ok());
}

TEST(CompileJob, AppliesStepAndPieceOverridesFromTheOptions) {
  CompileOptions options;
  options.steps = 10;
  options.micro_batches_per_step = 1;
  proto::Plan plan = Compile(kLinearJob, options);
  EXPECT_EQ(plan.schedule().steps(), 10);
  EXPECT_EQ(plan.schedule().pieces_per_step(), 1);
  EXPECT_EQ(FindActor(plan, "w.grad_accumulate"), nullptr);
  EXPECT_EQ(plan.register_def(FindActor(plan, "w.update")->input_register(0)).name(), "fc.grad_b");
}

TEST(CompileJob, UsesOneCpuWithEveryHardwareThreadWhenNoClusterIsGiven) {
  StatusOr<JobFile> job = ParseJobText(kLinearJob, "linear.pbtxt", ".");
  ASSERT_TRUE(job.ok());
  StatusOr<proto::Plan> plan = CompileJob(*job, CompileOptions{});
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->device_size(), 1);
  EXPECT_EQ(plan->device(0).node(), "node0");
  EXPECT_EQ(plan->device(0).name(), "cpu:0");
  EXPECT_EQ(plan->device(0).kind(), proto::DEVICE_KIND_CPU);
  EXPECT_EQ(plan->device(0).cores(),
            static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_EQ(plan->device(0).memory_budget(), 0);
}

TEST(CompileJob, RejectsParallelismThatNeedsMoreDevicesThanTheClusterHas) {
  CompileOptions options;
  options.parallel.set_data_parallel(2);
  StatusOr<proto::Plan> plan = CompileJobText(kLinearJob, options);
  EXPECT_EQ(plan.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(plan.status().message(),
            "test.pbtxt: parallel: data_parallel 2 x tensor_parallel 1 x pipeline_stages 1 needs "
            "2 devices "
            "but the cluster has 1 (node0/cpu:0)");
}

TEST(CompileJob, KeepsTheKernelAttributesCompleteAndTheShapesPhysical) {
  CompileOptions options;
  options.fuse_epilogues = false;  // fc stays a matmul actor.
  proto::Plan plan = Compile(kLinearJob, options);
  const proto::KernelDef& kernel = FindActor(plan, "fc")->kernel();
  EXPECT_EQ(kernel.op_type(), "matmul");
  ASSERT_EQ(kernel.attr_size(), 2);
  EXPECT_EQ(kernel.attr(0).name(), "transpose_a");
  EXPECT_EQ(kernel.input(0).dims_size(), 2);
  EXPECT_EQ(kernel.output(0).dims(1), 3);
}

TEST(SummarizePlan, ShowsDevicesKindsAndTheActorTable) {
  std::string summary = SummarizePlan(Compile(kLinearJob));
  EXPECT_THAT(summary, HasSubstr("plan 'linear': 3 steps x 4 pieces of 8 samples (12 pieces)"));
  EXPECT_THAT(summary, HasSubstr("node0/cpu:0 (cpu, 2 cores): planned "));
  EXPECT_THAT(summary, HasSubstr("budget unlimited"));
  EXPECT_THAT(summary, HasSubstr("(source 1, compute 9, variable 2, accumulate 1, update 1, "
                                 "sink 2)"));
  // One cpu device: one slot per source output (plan_registers).
  EXPECT_THAT(summary, ::testing::ContainsRegex("data +source +node0/cpu:0 +x 1 x 192 B, "
                                                "labels 1 x 64 B"));
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
