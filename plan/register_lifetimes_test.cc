// Lifetimes proven from the protocol's dependencies, and the arena check that accepts shared
// bytes only between registers proven never live together.
#include "plan/register_lifetimes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/plan_invariants.h"

namespace softwire {
namespace plan {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kBytesPerSlot = 64;

// A one-device plan built register by register, actor by actor, laid out without overlap.
class OneDevicePlan {
 public:
  explicit OneDevicePlan(int64_t pieces_per_step) {
    plan_.set_job_name("lifetimes");
    plan_.mutable_schedule()->set_steps(3);
    plan_.mutable_schedule()->set_pieces_per_step(pieces_per_step);
    proto::PlanDevice* device = plan_.add_device();
    device->set_node("node0");
    device->set_name("cpu:0");
    device->set_kind(proto::DEVICE_KIND_CPU);
  }

  // Consumers are (actor, phase); the producer is set by AddActor.
  int64_t AddRegister(const std::string& name, int slots, int64_t period,
                      const std::vector<std::pair<int64_t, int>>& consumers) {
    proto::RegisterDef* r = plan_.add_register_def();
    r->set_id(plan_.register_def_size() - 1);
    r->set_name(name);
    r->set_slots(slots);
    r->set_period(period);
    r->set_bytes_per_slot(kBytesPerSlot);
    r->mutable_tensor()->set_dtype(proto::DATA_TYPE_FLOAT32);
    r->set_offset(plan_.device(0).planned_bytes());
    plan_.mutable_device(0)->set_planned_bytes(r->offset() + slots * kBytesPerSlot);
    for (const auto& [actor, phase] : consumers) {
      proto::RegisterConsumer* consumer = r->add_consumer();
      consumer->set_actor(actor);
      consumer->set_phase(phase);
    }
    return r->id();
  }

  void AddActor(const std::string& name, proto::ActorKind kind, int64_t period,
                const std::vector<int64_t>& inputs, const std::vector<int64_t>& outputs) {
    proto::ActorDef* actor = plan_.add_actor();
    actor->set_id(plan_.actor_size() - 1);
    actor->set_name(name);
    actor->set_kind(kind);
    actor->set_period(period);
    const proto::Schedule& schedule = plan_.schedule();
    actor->set_firings(schedule.steps() * schedule.pieces_per_step() / period);
    for (int64_t r : inputs) actor->add_input_register(r);
    for (int64_t r : outputs) {
      actor->add_output_register(r);
      plan_.mutable_register_def(static_cast<int>(r))->set_producer(actor->id());
    }
  }

  // Lays `b` over `a` and lists the pair both ways.
  void Share(int64_t a, int64_t b) {
    plan_.mutable_register_def(static_cast<int>(b))->set_offset(plan_.register_def(a).offset());
    plan_.mutable_register_def(static_cast<int>(a))->add_shares_bytes_with(b);
    plan_.mutable_register_def(static_cast<int>(b))->add_shares_bytes_with(a);
  }

  // Gives actor `actor` a kernel of `op_type` over float32 scalars, one per input and output.
  void SetKernel(int64_t actor_id, const std::string& op_type) {
    proto::ActorDef* actor = plan_.mutable_actor(static_cast<int>(actor_id));
    proto::KernelDef* kernel = actor->mutable_kernel();
    kernel->set_op_type(op_type);
    for (int k = 0; k < actor->input_register_size(); ++k) {
      kernel->add_input()->set_dtype(proto::DATA_TYPE_FLOAT32);
    }
    for (int k = 0; k < actor->output_register_size(); ++k) {
      kernel->add_output()->set_dtype(proto::DATA_TYPE_FLOAT32);
    }
  }

  proto::Plan& plan() { return plan_; }

 private:
  proto::Plan plan_;
};

// source -> x -> relu -> y -> neg -> z -> sink, one slot each, one piece per step.
struct Pipeline {
  OneDevicePlan built{1};
  int64_t x, y, z;
  Pipeline() {
    x = built.AddRegister("x", 1, 1, {{1, 0}});
    y = built.AddRegister("y", 1, 1, {{2, 0}});
    z = built.AddRegister("z", 1, 1, {{3, 0}});
    built.AddActor("source", proto::ACTOR_KIND_SOURCE, 1, {}, {x});
    built.AddActor("relu", proto::ACTOR_KIND_COMPUTE, 1, {x}, {y});
    built.AddActor("neg", proto::ACTOR_KIND_COMPUTE, 1, {y}, {z});
    built.AddActor("sink", proto::ACTOR_KIND_SINK, 1, {z}, {});
  }
};

// The training cycle in miniature: variable w -> forward a -> b -> gradient c -> update, which
// writes w in place and frees its slot for the next step.
struct TrainingCycle {
  OneDevicePlan built{1};
  int64_t w, x, y, g;
  TrainingCycle() {
    w = built.AddRegister("w", 1, 1, {{1, 0}, {4, 1}});
    x = built.AddRegister("x", 1, 1, {{2, 0}});
    y = built.AddRegister("y", 1, 1, {{3, 0}});
    g = built.AddRegister("g", 1, 1, {{4, 0}});
    built.AddActor("w.variable", proto::ACTOR_KIND_VARIABLE, 1, {}, {w});
    built.AddActor("a", proto::ACTOR_KIND_COMPUTE, 1, {w}, {x});
    built.AddActor("b", proto::ACTOR_KIND_COMPUTE, 1, {x}, {y});
    built.AddActor("c", proto::ACTOR_KIND_COMPUTE, 1, {y}, {g});
    built.AddActor("w.update", proto::ACTOR_KIND_UPDATE, 1, {g, w}, {});
  }
};

TEST(RegisterLifetimesTest, APipelineSourceRunsAheadOfItsLastConsumer) {
  Pipeline pipeline;
  RegisterLifetimes lifetimes(pipeline.built.plan());
  ASSERT_TRUE(lifetimes.analyzed()) << lifetimes.why();
  // The source may write piece 1's x while the sink still reads piece 0's z.
  EXPECT_FALSE(lifetimes.NeverLiveTogether(pipeline.x, pipeline.z));
  EXPECT_FALSE(lifetimes.NeverLiveTogether(pipeline.z, pipeline.x));
  // relu reads x while it writes y.
  EXPECT_FALSE(lifetimes.NeverLiveTogether(pipeline.x, pipeline.y));
}

TEST(RegisterLifetimesTest, TheUpdateOrdersOneStepsGradientBeforeTheNextStepsForward) {
  TrainingCycle cycle;
  RegisterLifetimes lifetimes(cycle.built.plan());
  ASSERT_TRUE(lifetimes.analyzed()) << lifetimes.why();
  EXPECT_TRUE(lifetimes.NeverLiveTogether(cycle.x, cycle.g));
  EXPECT_TRUE(lifetimes.NeverLiveTogether(cycle.g, cycle.x));
  EXPECT_FALSE(lifetimes.NeverLiveTogether(cycle.x, cycle.y));
  EXPECT_FALSE(lifetimes.NeverLiveTogether(cycle.y, cycle.g));
  // A variable keeps its value from step to step: it never shares.
  EXPECT_FALSE(MayShareBytes(cycle.built.plan(), cycle.w));
  EXPECT_FALSE(lifetimes.NeverLiveTogether(cycle.w, cycle.y));
  EXPECT_LT(lifetimes.FirstWriteRank(cycle.x), lifetimes.FirstWriteRank(cycle.g));
}

TEST(RegisterLifetimesTest, TwoSlotsLetTheNextStepsForwardOverlapTheGradient) {
  TrainingCycle cycle;
  cycle.built.plan().mutable_register_def(static_cast<int>(cycle.x))->set_slots(2);
  cycle.built.plan().mutable_register_def(static_cast<int>(cycle.y))->set_slots(2);
  RegisterLifetimes lifetimes(cycle.built.plan());
  ASSERT_TRUE(lifetimes.analyzed()) << lifetimes.why();
  // Still ordered: the next x needs the next w, which needs this step's update.
  EXPECT_TRUE(lifetimes.NeverLiveTogether(cycle.x, cycle.g));
}

TEST(RegisterLifetimesTest, PiecesOfOneStepOverlapEachOther) {
  // Two pieces per step: w is per step, x, y and g per piece, g accumulated per step.
  OneDevicePlan built(2);
  const int64_t w = built.AddRegister("w", 1, 2, {{1, 0}, {5, 1}});
  const int64_t x = built.AddRegister("x", 1, 1, {{2, 0}});
  const int64_t y = built.AddRegister("y", 1, 1, {{3, 0}});
  const int64_t g = built.AddRegister("g", 1, 1, {{4, 0}});
  const int64_t sum = built.AddRegister("g.sum", 1, 2, {{5, 0}});
  built.AddActor("w.variable", proto::ACTOR_KIND_VARIABLE, 2, {}, {w});
  built.AddActor("a", proto::ACTOR_KIND_COMPUTE, 1, {w}, {x});
  built.AddActor("b", proto::ACTOR_KIND_COMPUTE, 1, {x}, {y});
  built.AddActor("c", proto::ACTOR_KIND_COMPUTE, 1, {y}, {g});
  built.AddActor("accumulate", proto::ACTOR_KIND_ACCUMULATE, 1, {g}, {sum});
  built.AddActor("w.update", proto::ACTOR_KIND_UPDATE, 2, {sum, w}, {});
  RegisterLifetimes lifetimes(built.plan());
  ASSERT_TRUE(lifetimes.analyzed()) << lifetimes.why();
  // Piece 1's x may be written while piece 0's g is still read.
  EXPECT_FALSE(lifetimes.NeverLiveTogether(x, g));
  // The per-step sum is live from the step's first piece to the update: piece 1's x is written
  // meanwhile.
  EXPECT_FALSE(lifetimes.NeverLiveTogether(x, sum));
}

// Found by the job_compiler fuzzer: a plan in which no register may share bytes (a variable
// read by a sink) has no beginning firings to reach; the analysis must not index an empty table.
TEST(RegisterLifetimesTest, APlanWithNothingToShareIsAnalyzed) {
  OneDevicePlan built(1);
  const int64_t w = built.AddRegister("w", 1, 1, {{1, 0}});
  built.AddActor("w.variable", proto::ACTOR_KIND_VARIABLE, 1, {}, {w});
  built.AddActor("sink", proto::ACTOR_KIND_SINK, 1, {w}, {});
  RegisterLifetimes lifetimes(built.plan());
  ASSERT_TRUE(lifetimes.analyzed()) << lifetimes.why();
  EXPECT_FALSE(MayShareBytes(built.plan(), w));
  EXPECT_FALSE(lifetimes.NeverLiveTogether(w, w));
}

// source -> `computes` chained computes -> sink over 64 pieces a step: (computes + 2) x 128
// firings in the two-step window, and as many beginning firings as fills the computes and the
// source write.
OneDevicePlan LongChain(int computes) {
  OneDevicePlan built(64);
  std::vector<int64_t> registers;
  for (int k = 0; k <= computes; ++k) {
    registers.push_back(built.AddRegister("r" + std::to_string(k), 2, 1, {{k + 1, 0}}));
  }
  built.AddActor("source", proto::ACTOR_KIND_SOURCE, 1, {}, {registers[0]});
  for (int k = 1; k <= computes; ++k) {
    built.AddActor("c" + std::to_string(k), proto::ACTOR_KIND_COMPUTE, 1, {registers[k - 1]},
                   {registers[k]});
  }
  built.AddActor("sink", proto::ACTOR_KIND_SINK, 1, {registers[computes]}, {});
  return built;
}

TEST(RegisterLifetimesTest, APlanTooLargeToAnalyzeSaysSoAndSharesNothing) {
  // 132 x 128 = 16,896 firings x 131 x 128 = 16,768 beginning firings: above 2^28 bits.
  OneDevicePlan large = LongChain(130);
  RegisterLifetimes too_large(large.plan());
  EXPECT_FALSE(too_large.analyzed());
  EXPECT_THAT(too_large.why(), HasSubstr("too large to analyze (16896 firings x 16768 beginning"));
  EXPECT_FALSE(too_large.NeverLiveTogether(0, 100));
  EXPECT_EQ(too_large.FirstWriteRank(5), 0);
  // 102 x 128 firings x 101 x 128: under the bound, analyzed (a pipeline this deep keeps every
  // register live alongside every other, so nothing may share, but the firings are ranked).
  OneDevicePlan smaller = LongChain(100);
  RegisterLifetimes analyzed(smaller.plan());
  ASSERT_TRUE(analyzed.analyzed()) << analyzed.why();
  EXPECT_FALSE(analyzed.NeverLiveTogether(0, 1));
  EXPECT_GT(analyzed.FirstWriteRank(100), analyzed.FirstWriteRank(0));
}

// In-place ops: b (relu) is x's only reader, so it may write y over x; when c reads x too,
// c may still read a fill b has overwritten.
TEST(RegisterLifetimesTest, AnElementWiseOpWritesInPlaceOverAnInputItReadsLast) {
  TrainingCycle cycle;
  cycle.built.SetKernel(2, "relu");
  RegisterLifetimes lifetimes(cycle.built.plan());
  ASSERT_TRUE(lifetimes.analyzed()) << lifetimes.why();
  EXPECT_FALSE(lifetimes.NeverLiveTogether(cycle.x, cycle.y));
  EXPECT_TRUE(lifetimes.WritesInPlace(cycle.x, cycle.y));
  EXPECT_FALSE(lifetimes.WritesInPlace(cycle.y, cycle.x)) << "a doesn't write y";
  const proto::Plan& plan = cycle.built.plan();
  EXPECT_TRUE(KernelMayWriteOver(plan, plan.actor(2), cycle.x));
  cycle.built.SetKernel(3, "softmax");
  EXPECT_FALSE(KernelMayWriteOver(plan, plan.actor(3), cycle.y)) << "not element-local";
}

TEST(RegisterLifetimesTest, NoInPlaceWriteOverAnInputAnotherOpMayReadLater) {
  TrainingCycle cycle;
  proto::Plan& plan = cycle.built.plan();
  plan.mutable_actor(3)->add_input_register(cycle.x);  // c reads x too.
  proto::RegisterConsumer* consumer =
      plan.mutable_register_def(static_cast<int>(cycle.x))->add_consumer();
  consumer->set_actor(3);
  cycle.built.SetKernel(2, "relu");
  RegisterLifetimes lifetimes(plan);
  ASSERT_TRUE(lifetimes.analyzed()) << lifetimes.why();
  EXPECT_FALSE(lifetimes.WritesInPlace(cycle.x, cycle.y));
  cycle.built.Share(cycle.x, cycle.y);
  EXPECT_THAT(CheckPlanInvariants(plan).message(), HasSubstr("both can be live at once"));
}

TEST(ArenaLayoutCheckTest, AcceptsAnOutputWrittenInPlaceOverItsInput) {
  TrainingCycle cycle;
  cycle.built.SetKernel(2, "relu");
  cycle.built.Share(cycle.x, cycle.y);
  EXPECT_TRUE(CheckPlanInvariants(cycle.built.plan()).ok())
      << CheckPlanInvariants(cycle.built.plan());
  // The same layout with a kernel that is not element-local is rejected.
  cycle.built.plan().mutable_actor(2)->mutable_kernel()->set_op_type("softmax");
  EXPECT_THAT(CheckPlanInvariants(cycle.built.plan()).message(),
              HasSubstr("both can be live at once"));
}

TEST(ArenaLayoutCheckTest, AcceptsBytesSharedByRegistersNeverLiveTogether) {
  TrainingCycle cycle;
  cycle.built.Share(cycle.x, cycle.g);
  EXPECT_TRUE(CheckPlanInvariants(cycle.built.plan()).ok())
      << CheckPlanInvariants(cycle.built.plan());
}

TEST(ArenaLayoutCheckTest, RejectsSharedBytesOfRegistersThatCanBeLiveTogether) {
  TrainingCycle cycle;
  cycle.built.Share(cycle.x, cycle.y);
  const Status status = CheckPlanInvariants(cycle.built.plan());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("register 'x' (1) shares bytes with register 2 "
                                          "(register 'y' (2)), but both can be live at once"));
}

TEST(ArenaLayoutCheckTest, RejectsAnOverlapNotDeclaredBothWays) {
  TrainingCycle cycle;
  cycle.built.Share(cycle.x, cycle.g);
  cycle.built.plan().mutable_register_def(static_cast<int>(cycle.g))->clear_shares_bytes_with();
  EXPECT_THAT(CheckPlanInvariants(cycle.built.plan()).message(),
              HasSubstr("register 'x' (1) slots [64, 128) overlaps register 'g' (3) slots"));
}

TEST(ArenaLayoutCheckTest, RejectsSharingWithAVariable) {
  TrainingCycle cycle;
  cycle.built.Share(cycle.w, cycle.g);
  EXPECT_THAT(CheckPlanInvariants(cycle.built.plan()).message(), HasSubstr("both can be live"));
}

}  // namespace
}  // namespace plan
}  // namespace softwire
