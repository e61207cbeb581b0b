// The example jobs (tests/compiler/jobs/) compile under data, tensor and pipeline parallelism
// and their combinations into plans that keep the protocol's invariants, prove deadlock-free,
// and have the structure docs/PARALLELISM.md describes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/file.h"
#include "compiler/compiler.h"
#include "compiler/emitted_plan_check.h"
#include "compiler/testing/compiler_test_util.h"
#include "compiler/testing/parallel_settings.h"
#include "placement/cluster_spec.h"
#include "plan/input_ranges.h"

namespace softwire {
namespace compiler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// On 4 cpu devices, or as many as the setting occupies when that is more.
CompileOptions OptionsFor(const ParallelSetting& setting) {
  return ParallelOptions(setting, std::max(4, setting.Devices()));
}

StatusOr<proto::Plan> CompileExample(const std::string& job, const ParallelSetting& setting,
                                     SbpSearchMethod method = SbpSearchMethod::kGlobal) {
  SOFTWIRE_ASSIGN_OR_RETURN(JobFile file, ParseJobFile("tests/compiler/jobs/" + job + ".pbtxt"));
  CompileOptions options = OptionsFor(setting);
  options.sbp_search = method;
  return CompileJob(file, options);
}

std::map<proto::ActorKind, int> KindCounts(const proto::Plan& plan) {
  std::map<proto::ActorKind, int> counts;
  for (const proto::ActorDef& actor : plan.actor()) ++counts[actor.kind()];
  return counts;
}

class ParallelExample : public ::testing::TestWithParam<std::tuple<std::string, ParallelSetting>> {
};

TEST_P(ParallelExample, CompilesToAPlanThatKeepsTheProtocolInvariants) {
  const auto& [job, setting] = GetParam();
  StatusOr<proto::Plan> plan = CompileExample(job, setting);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(CheckEmittedPlan(*plan).ok()) << CheckEmittedPlan(*plan);
  const int devices = setting.dp * setting.tp * setting.pp;
  ASSERT_EQ(plan->device_size(), devices);
  std::set<int> used;
  std::set<std::string> names;
  for (const proto::ActorDef& actor : plan->actor()) {
    used.insert(actor.device());
    EXPECT_TRUE(names.insert(actor.name()).second) << "two actors are named " << actor.name();
    EXPECT_GE(actor.estimated_seconds(), 0) << actor.name();
    if (actor.kind() == proto::ACTOR_KIND_COPY) {
      EXPECT_EQ(actor.queue(), 1) << actor.name();
      EXPECT_NE(plan->register_def(actor.input_register(0)).device(), actor.device())
          << actor.name();
    }
    for (int64_t id : actor.output_register()) {
      EXPECT_EQ(plan->register_def(id).device(), actor.device()) << actor.name();
    }
    for (int64_t id : actor.input_register()) {
      if (actor.kind() != proto::ACTOR_KIND_COPY) {
        EXPECT_EQ(plan->register_def(id).device(), actor.device())
            << actor.name() << " reads '" << plan->register_def(id).name() << "' across devices";
      }
    }
  }
  EXPECT_EQ(static_cast<int>(used.size()), devices);
  // One loss sink, reading a value on one device.
  int loss_outputs = 0;
  for (const proto::PlanOutput& output : plan->output()) loss_outputs += output.is_loss() ? 1 : 0;
  EXPECT_EQ(loss_outputs, 1);
  std::map<proto::ActorKind, int> counts = KindCounts(*plan);
  EXPECT_EQ(counts[proto::ACTOR_KIND_SOURCE], setting.dp * setting.tp);
}

std::string SettingName(
    const ::testing::TestParamInfo<std::tuple<std::string, ParallelSetting>>& info) {
  return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(MlpAndTransformer, ParallelExample,
                         ::testing::Combine(::testing::Values("mlp", "transformer"),
                                            ::testing::ValuesIn(kParallelSettings)),
                         SettingName);

const proto::RegisterDef& Output(const proto::Plan& plan, const std::string& actor, int index = 0) {
  const proto::ActorDef* found = FindActor(plan, actor);
  CHECK(found != nullptr) << "no actor " << actor;
  return plan.register_def(found->output_register(index));
}

proto::Plan MustCompile(const std::string& job, const ParallelSetting& setting,
                        SbpSearchMethod method = SbpSearchMethod::kGlobal) {
  StatusOr<proto::Plan> plan = CompileExample(job, setting, method);
  CHECK(plan.ok()) << plan.status();
  return std::move(plan).value();
}

// The classic data-parallel structure, as the greedy sbp choice makes it. The global search may
// instead gather a weight gradient's inputs per piece where the cost model finds that cheaper
// than the per-step all-reduce (docs/PARALLELISM.md, "Sbp"); its plans are checked against one
// device in compiler_parallel_equivalence_test.
TEST(DataParallelMlp, SplitsEachMicroBatchReplicatesWeightsAndAllReducesGradientsPerStep) {
  proto::Plan plan = MustCompile("mlp", {"dp4", 4, 1, 1}, SbpSearchMethod::kGreedy);
  for (int replica = 0; replica < 4; ++replica) {
    const proto::ActorDef* source = FindActor(plan, "data@" + std::to_string(replica));
    ASSERT_NE(source, nullptr);
    EXPECT_EQ(source->source().sample_begin(), 8 * replica);
    EXPECT_EQ(source->source().sample_end(), 8 * replica + 8);
    const proto::ActorDef* w2 = FindActor(plan, "w2@" + std::to_string(replica));
    ASSERT_NE(w2, nullptr);
    EXPECT_EQ(w2->variable().split_axis(), -1);
    EXPECT_EQ(w2->variable().logical_tensor().dims(0), 256);
  }
  // Replicas are listed once.
  for (const proto::PlanVariable& variable : plan.variable()) {
    if (variable.name() == "w2") {
      EXPECT_EQ(variable.part_size(), 1);
    }
  }
  // w2's gradient: summed over the step's pieces, then ring all-reduced once per step in a
  // gradient bucket, then applied: the update reads its part of the reduced bucket.
  const proto::ActorDef* update = FindActor(plan, "w2.update@1");
  ASSERT_NE(update, nullptr);
  const proto::RegisterDef& gradient = plan.register_def(update->input_register(0));
  EXPECT_EQ(gradient.name(), "w2.grad_accumulated.reduced@1");
  EXPECT_EQ(gradient.period(), 2);
  const proto::ActorDef& reshape = plan.actor(gradient.producer());
  EXPECT_EQ(reshape.kernel().op_type(), "reshape");
  const proto::ActorDef& unpack =
      plan.actor(plan.register_def(reshape.input_register(0)).producer());
  EXPECT_EQ(unpack.kernel().op_type(), "flat_split");
  EXPECT_EQ(unpack.name(), "gradient_bucket0.unpack@1");
  // One bucket holds all six gradients (w1's, split by rows, padded with zeros first): one
  // ring for the whole model.
  EXPECT_EQ(unpack.output_register_size(), 6);
  // The ring reads each member's chunks as byte ranges of its pack (fold_views, docs/PROTOCOL.md
  // "Range views"): no split, and every first-step copy reads a range.
  int bucket_splits = 0;
  int first_copies = 0;
  int range_copies = 0;
  for (const proto::ActorDef& actor : plan.actor()) {
    bucket_splits += actor.name().rfind("gradient_bucket0.all_reduce.split@", 0) == 0 ? 1 : 0;
    if (actor.name().rfind("gradient_bucket0.all_reduce.c", 0) == 0 &&
        actor.name().find(".s1.copy@") != std::string::npos) {
      ++first_copies;
      range_copies += plan::IsRangeInput(plan, actor, 0);
    }
  }
  EXPECT_EQ(bucket_splits, 0);
  EXPECT_GE(first_copies, 4);  // At least one chunk per member.
  EXPECT_EQ(range_copies, first_copies);
  // The loss: each replica's mean over its rows divided by the whole micro-batch, summed on one
  // device for the sink.
  const proto::ActorDef* mean = FindActor(plan, "mean_loss@3");
  ASSERT_NE(mean, nullptr);
  bool has_divisor = false;
  for (const proto::Attribute& attr : mean->kernel().attr()) {
    if (attr.name() == "divisor") has_divisor = attr.int_() == 32;
  }
  EXPECT_TRUE(has_divisor);
  const proto::ActorDef* sink = FindActor(plan, "loss.sink");
  ASSERT_NE(sink, nullptr);
  const proto::RegisterDef& summed = plan.register_def(sink->input_register(0));
  EXPECT_EQ(plan.actor(summed.producer()).kernel().op_type(), "assemble");
  EXPECT_EQ(plan.actor(summed.producer()).input_register_size(), 4);
}

// The bench MLP's gradients (7.1 MiB per device; w2's alone 4 MiB): one bucket on one node, but
// buckets of at most 4 MiB where the dp group spans nodes, so the last layers' exchange can start
// while the first layers' backward runs (docs/DATA_PLANE.md, "Collectives across nodes").
TEST(DataParallelMlp, BucketsSpanningNodesCloseAtFourMiBAndOnOneNodeHoldTheWholeModel) {
  StatusOr<JobFile> job = ParseJobFile("bench/training/mlp.pbtxt");
  ASSERT_TRUE(job.ok()) << job.status();
  const auto buckets = [&](const std::string& cluster) {
    CompileOptions options;
    StatusOr<proto::Cluster> parsed = placement::ParseClusterShorthand(cluster, 8);
    CHECK(parsed.ok()) << parsed.status();
    options.cluster = *parsed;
    options.parallel.set_data_parallel(2);
    options.sbp_search = SbpSearchMethod::kGreedy;  // Every gradient all-reduced, as above.
    StatusOr<proto::Plan> plan = CompileJob(*job, options);
    CHECK(plan.ok()) << plan.status();
    std::vector<int> gradients_per_bucket;
    for (const proto::ActorDef& actor : plan->actor()) {
      const std::string& name = actor.name();
      // The packs: a bucket's unpacking split may be folded (read as ranges) where only
      // reshapes read it (w2's bucket of one).
      if (name.rfind("gradient_bucket", 0) == 0 && name.find(".pack@0") != std::string::npos) {
        gradients_per_bucket.push_back(actor.input_register_size());
      }
    }
    return gradients_per_bucket;
  };
  EXPECT_THAT(buckets("2cpu"), ElementsAre(6));
  // Backward order: b3, w3, b2 (44 KiB); w2 (4 MiB, alone); b1, w1.
  EXPECT_THAT(buckets("2x1cpu"), ElementsAre(3, 1, 2));
}

TEST(PipelinedMlp, GivesActivationsKeptForBackwardOnStageSPMinusSSlots) {
  proto::Plan plan = MustCompile("mlp", {"pp2", 1, 1, 2});
  // pp = 2 and two pieces per step: stage 0 keeps its activations for 2 pieces, stage 1 for 1.
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.kind() != proto::ACTOR_KIND_COMPUTE || actor.period() != 1) continue;
    for (int64_t id : actor.output_register()) {
      const proto::RegisterDef& reg = plan.register_def(id);
      bool read_backward = false;
      bool copied = false;
      for (const proto::RegisterConsumer& consumer : reg.consumer()) {
        const proto::ActorDef& reader = plan.actor(consumer.actor());
        read_backward |= reader.logical_op().find(".grad") != std::string::npos &&
                         actor.logical_op().find(".grad") == std::string::npos;
        copied |= reader.kind() == proto::ACTOR_KIND_COPY;
      }
      int expected = read_backward ? 2 - actor.stage() : 1;
      if (copied) expected = std::max(expected, 2);
      EXPECT_EQ(reg.slots(), expected) << reg.name() << " on stage " << actor.stage();
    }
  }
  EXPECT_EQ(Output(plan, "data").slots(), 2);
  // Every stage's actors run on that stage's device.
  for (const proto::ActorDef& actor : plan.actor()) EXPECT_EQ(actor.device(), actor.stage());
}

TEST(PipelinedTransformer, KeepsTheTiedEmbeddingWithItsFirstReaderAndCopiesItPerStep) {
  proto::Plan plan = MustCompile("transformer", {"pp2", 1, 1, 2});
  const proto::ActorDef* wte = FindActor(plan, "wte");
  ASSERT_NE(wte, nullptr);
  EXPECT_EQ(wte->stage(), 0);
  const proto::ActorDef* logits = FindActor(plan, "logits");
  ASSERT_NE(logits, nullptr);
  EXPECT_EQ(logits->stage(), 1);
  const proto::RegisterDef& table = plan.register_def(logits->input_register(1));
  const proto::ActorDef& copy = plan.actor(table.producer());
  EXPECT_EQ(copy.kind(), proto::ACTOR_KIND_COPY);
  EXPECT_EQ(copy.period(), 2);  // Once per step.
  EXPECT_EQ(table.slots(), 1);
  // Its two gradients meet on stage 0, where the update runs.
  EXPECT_EQ(FindActor(plan, "wte.update")->stage(), 0);
  EXPECT_EQ(FindActor(plan, "wte.grad")->stage(), 0);
}

// Every variable split in balanced halves across the tp group, each half on its own device;
// `axis` names the split axis per variable where the test pins it (null: any axis).
void ExpectEveryWeightSplitAcrossTwoDevices(const proto::Plan& plan,
                                            const std::map<std::string, int>* axis) {
  ASSERT_EQ(plan.variable_size(), 6);
  for (const proto::PlanVariable& variable : plan.variable()) {
    ASSERT_EQ(variable.part_size(), 2) << variable.name();
    for (int i = 0; i < 2; ++i) {
      const proto::VariablePart& part = variable.part(i);
      ASSERT_GE(part.split_axis(), 0) << variable.name();
      if (axis != nullptr) {
        EXPECT_EQ(part.split_axis(), axis->at(variable.name())) << variable.name();
      }
      const int64_t extent = variable.tensor().dims(part.split_axis());
      EXPECT_EQ(part.split_begin(), i * extent / 2) << variable.name();
      EXPECT_EQ(part.split_end(), (i + 1) * extent / 2) << variable.name();
      const proto::ActorDef& actor = plan.actor(plan.register_def(part.register_id()).producer());
      EXPECT_EQ(actor.variable().split_begin(), part.split_begin());
      EXPECT_EQ(actor.device(), i);
    }
  }
}

TEST(TensorParallelMlp, GreedySplitsEveryWeightAcrossTheTensorParallelGroupAsMegatronDoes) {
  StatusOr<JobFile> job = ParseJobFile("tests/compiler/jobs/mlp.pbtxt");
  ASSERT_TRUE(job.ok()) << job.status();
  CompileOptions options;
  options.cluster = *placement::ParseClusterShorthand("4cpu", 8);
  options.parallel.set_tensor_parallel(2);
  options.sbp_search = SbpSearchMethod::kGreedy;
  StatusOr<proto::Plan> plan = CompileJob(*job, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // fc1 splits w1's columns, fc2 and fc3 split their weights' rows (partial sums out).
  const std::map<std::string, int> axis = {{"w1", 1}, {"b1", 0}, {"w2", 0},
                                           {"b2", 0}, {"w3", 0}, {"b3", 0}};
  ExpectEveryWeightSplitAcrossTwoDevices(*plan, &axis);
  const proto::ActorDef* fc2 = FindActor(*plan, "fc2@1");
  ASSERT_NE(fc2, nullptr);
  EXPECT_EQ(fc2->kernel().input(0).dims(1), 128);  // a1's columns on this device...
  EXPECT_EQ(fc2->kernel().input(1).dims(0), 128);  // ...times w2's rows: a partial h2.
}

// The global search may split a weight on another axis than Megatron's where the cost model
// finds the boxing cheaper (here w2 by columns, after gathering the first layer's activations),
// but still splits every one.
TEST(TensorParallelMlp, GlobalSearchSplitsEveryWeightAcrossTheTensorParallelGroup) {
  ExpectEveryWeightSplitAcrossTwoDevices(MustCompile("mlp", {"tp2", 1, 2, 1}), nullptr);
}

TEST(ParallelPlans, LowerSlotsToFitAndNameTheDeviceWhenEvenOneSlotDoesNot) {
  // dp2 x pp2 on 4 cpus: 2 MiB devices need their pipelined slots lowered; 64 KiB ones fail.
  StatusOr<JobFile> job = ParseJobFile("tests/compiler/jobs/mlp.pbtxt");
  ASSERT_TRUE(job.ok());
  CompileOptions options;
  options.parallel.set_data_parallel(2);
  options.parallel.set_pipeline_stages(2);
  options.cluster = *placement::ParseClusterShorthand("4cpu", 8);
  // fit_memory judges bytes before lifetime-based reuse (which only shrinks them), so the tight
  // budget comes from the layout without reuse.
  options.share_memory = false;
  StatusOr<proto::Plan> roomy = CompileJob(*job, options);
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  options.share_memory = true;
  int64_t needed = 0;
  for (const proto::PlanDevice& device : roomy->device()) {
    needed = std::max(needed, device.planned_bytes());
  }
  options.cluster = *placement::ParseClusterShorthand("4cpu:" + std::to_string(needed - 4096), 8);
  StatusOr<proto::Plan> tight = CompileJob(*job, options);
  ASSERT_TRUE(tight.ok()) << tight.status();
  for (const proto::PlanDevice& device : tight->device()) {
    EXPECT_LE(device.planned_bytes(), needed - 4096) << device.name();
  }
  EXPECT_TRUE(CheckEmittedPlan(*tight).ok());

  options.cluster = *placement::ParseClusterShorthand("4cpu:64KiB", 8);
  StatusOr<proto::Plan> small = CompileJob(*job, options);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(small.status().message(),
              HasSubstr("device 'node0/cpu:0': the plan needs at least "));
  EXPECT_THAT(small.status().message(), HasSubstr("but its memory budget is 65536 bytes"));
}

TEST(ParallelPlans, RejectsBeforeRunningAPlanWhoseStagesWaitOnEachOtherInACycle) {
  // A forward op of stage 0 made to read this step's summed gradient (which needs stage 0's
  // backward of every piece) is a cycle between the stages: the deadlock check must catch it.
  StatusOr<std::string> text = ReadFile("tests/compiler/jobs/mlp.pbtxt");
  ASSERT_TRUE(text.ok());
  CompileOptions options;
  options.cluster = *placement::ParseClusterShorthand("4cpu", 8);
  options.parallel.set_pipeline_stages(2);
  StagedCompilation staged(*text, options);
  ASSERT_TRUE(staged.RunThrough("estimate_costs").ok());
  TaskGraph& tasks = staged.compilation().tasks;
  TaskId fc1 = -1;
  RegisterId gradient = -1;
  for (const TaskDef& task : tasks.tasks()) {
    if (task.name == "fc1") fc1 = task.id;
  }
  for (const TaskRegister& reg : tasks.registers()) {
    if (reg.name == "w1.grad_accumulated") gradient = reg.id;
  }
  ASSERT_GE(fc1, 0);
  ASSERT_GE(gradient, 0);
  tasks.AddReader(gradient, fc1, 0);
  Status status = staged.RunThrough("check_deadlock");
  ASSERT_EQ(status.code(), StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(status.message(), HasSubstr("the plan would deadlock"));
  EXPECT_THAT(status.message(),
              HasSubstr("actor 'fc1' (firing 0 of 4) waits for fill 0 of register "
                        "'w1.grad_accumulated' from 'w1.grad_accumulate'"));
  // The cycle of waits comes first: fc1 -> w1.grad_accumulate -> ... -> fc1.
  EXPECT_THAT(status.message(), HasSubstr("no actor can fire; cycle of waits: 'fc1' waits for "
                                          "'w1.grad_accumulated' from 'w1.grad_accumulate'"));
}

TEST(ParallelPlans, ProveDeadlockFreedomOverAStepAndIntoTheNext) {
  for (const ParallelSetting& setting : kParallelSettings) {
    StatusOr<JobFile> job = ParseJobFile("tests/compiler/jobs/transformer.pbtxt");
    ASSERT_TRUE(job.ok());
    CompileOptions options = OptionsFor(setting);
    options.micro_batches_per_step = 4;
    StatusOr<proto::Plan> plan = CompileJob(*job, options);
    EXPECT_TRUE(plan.ok()) << setting.name << ": " << plan.status();
  }
}

}  // namespace
}  // namespace compiler
}  // namespace softwire
