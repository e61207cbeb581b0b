// Several firings in flight (docs/PROTOCOL.md, "Several firings in flight"): exact message
// order on a small chain, the refusals, and randomized schedules. The randomized runs give
// compute and copy actors of random plans up to 4 firings in flight, deliver messages in random
// order (kept per sender/receiver pair) and complete kernels late, across actors in any order
// and within an actor in launch order (a FIFO device queue) or out of it. A model of every slot
// outside the protocol carries values: each kernel reads its inputs at launch and again when
// it completes (so a slot overwritten while the kernel runs is caught), and writes a value
// mixed from them at completion. Every run must end with every actor finished, and every
// firing of every actor must read and write the same values as in a run one at a time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "actors/actor_protocol.h"
#include "actors/testing/protocol_test_host.h"
#include "actors/testing/random_plan_maker.h"
#include "actors/testing/timed_completions.h"
#include "plan/fill_arithmetic.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace {

using plan::testing::PlanBuilder;
using ::testing::HasSubstr;
using testing::JoinLines;
using testing::ProtocolTestHost;
using testing::RandomPlanMaker;

// source -> relu -> sink over `pieces` pieces, registers of `slots` slots, relu with k in flight.
proto::Plan Chain(int64_t pieces, int slots, int relu_in_flight) {
  PlanBuilder plan(pieces, 1);
  plan.AddRegister("x", slots).AddRegister("y", slots);
  plan.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
  plan.AddActor({"relu", proto::ACTOR_KIND_COMPUTE, {"x"}, {"y"}});
  plan.AddActor({"sink", proto::ACTOR_KIND_SINK, {"y"}, {}});
  proto::Plan built = plan.Build();
  built.mutable_actor(1)->set_max_in_flight(relu_in_flight);
  return built;
}

std::unique_ptr<ProtocolTestHost> ManualHost(const proto::Plan& plan) {
  ProtocolTestHost::Options options;
  options.complete_immediately = false;
  StatusOr<std::unique_ptr<ProtocolTestHost>> host = ProtocolTestHost::Create(plan, options);
  EXPECT_TRUE(host.ok()) << host.status();
  return std::move(host).value();
}

TEST(ActorProtocolInFlightTest, AnActorLaunchesUpToItsLimitAndCompletionsTakeEffectInOrder) {
  std::unique_ptr<ProtocolTestHost> host = ManualHost(Chain(3, 3, 2));
  host->Start();
  // The source (one at a time) fills x0, x1, x2 as each completes.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(host->Run().ok());
    ASSERT_TRUE(host->Complete("source").ok());
  }
  ASSERT_TRUE(host->Run().ok());
  const ActorId relu = host->id("relu");
  // Two in flight, the third waits for a completion.
  EXPECT_EQ(host->in_flight(relu), (std::vector<int64_t>{0, 1}));
  host->TakeTranscript();
  // Firing 1 completes first: nothing may be said until firing 0 completed.
  ASSERT_TRUE(host->CompleteFiring(relu, 1).ok());
  EXPECT_EQ(JoinLines(host->TakeTranscript()), "");
  EXPECT_EQ(host->protocol("relu").completed_firings(), 0);
  EXPECT_EQ(host->protocol("relu").DescribeWait().kind, WaitState::Kind::kRunning);
  ASSERT_TRUE(host->CompleteFiring(relu, 0).ok());
  const std::vector<std::string> expected = {
      "relu -> source: Release(x, slot 0, seq 0)",  // Firing 0's effects,
      "relu -> sink: Ready(y, slot 0, seq 0)",
      "relu -> source: Release(x, slot 1, seq 1)",  // then firing 1's, in launch order,
      "relu -> sink: Ready(y, slot 1, seq 1)",
      "relu: launch 2",  // then the launch the free place allows.
  };
  EXPECT_EQ(JoinLines(host->TakeTranscript()), JoinLines(expected));
  EXPECT_EQ(host->protocol("relu").launched_firings(), 3);
}

TEST(ActorProtocolInFlightTest, SlotsBoundTheFiringsInFlight) {
  // Four allowed, but y has two slots the sink does not release yet: two in flight.
  std::unique_ptr<ProtocolTestHost> host = ManualHost(Chain(4, 2, 4));
  host->Start();
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(host->Run().ok());
    ASSERT_TRUE(host->Complete("source").ok());
  }
  ASSERT_TRUE(host->Run().ok());
  EXPECT_EQ(host->in_flight(host->id("relu")).size(), 2u);
  EXPECT_EQ(host->protocol("relu").occupied_slots(0), 2);
}

TEST(ActorProtocolInFlightTest, ACompletionOfAFiringNotInFlightOrTwiceIsAnInternalError) {
  std::unique_ptr<ProtocolTestHost> host = ManualHost(Chain(3, 3, 2));
  host->Start();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(host->Run().ok());
    ASSERT_TRUE(host->Complete("source").ok());
  }
  ASSERT_TRUE(host->Run().ok());
  ActorProtocol& relu = host->protocol("relu");
  Outbox outbox;
  Status status = relu.OnFiringDone(2, &outbox);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_THAT(status.message(),
              HasSubstr("completion of firing 2, but firings 0 to 1 are in flight"));
  ASSERT_TRUE(relu.OnFiringDone(1, &outbox).ok());
  status = relu.OnFiringDone(1, &outbox);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("and its completion already came"));
}

TEST(ActorProtocolInFlightTest, OnlyComputeCopyAndSendActorsMayHaveSeveralFiringsInFlight) {
  proto::Plan plan = Chain(2, 2, 1);
  plan.mutable_actor(2)->set_max_in_flight(2);  // The sink.
  StatusOr<std::vector<ActorDescription>> described = DescribeActors(plan);
  ASSERT_FALSE(described.ok());
  EXPECT_THAT(described.status().message(),
              HasSubstr("'sink' (2): sink actor has max_in_flight 2, but only compute, copy "
                        "and send"));
  plan.mutable_actor(2)->set_max_in_flight(0);
  plan.mutable_actor(1)->set_max_in_flight(-1);
  described = DescribeActors(plan);
  ASSERT_FALSE(described.ok());
  EXPECT_THAT(described.status().message(), HasSubstr("has max_in_flight -1, must be at least 1"));
  plan.mutable_actor(1)->set_max_in_flight(0);  // Unset: one at a time.
  described = DescribeActors(plan);
  ASSERT_TRUE(described.ok()) << described.status();
  EXPECT_EQ((*described)[1].max_in_flight, 1);
}

// What a slot holds, as seen from outside the protocol.
struct SlotModel {
  int64_t fill = -1;
  bool complete = false;    // The kernel that writes the fill finished.
  int64_t value = 0;        // Written when the fill's last firing completed.
  int releases = 0;         // For `fill`.
  int reader_releases = 0;  // From phase-0 consumers.
};

// One firing as the model saw it: the values it read (at launch) and wrote (at completion).
struct FiringRecord {
  std::vector<int64_t> read;
  std::vector<int64_t> written;
  bool operator==(const FiringRecord& other) const {
    return read == other.read && written == other.written;
  }
};

int64_t Mix(int64_t seed, int64_t value) {
  uint64_t x = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(value);
  x ^= x >> 29;
  return static_cast<int64_t>(x * 0xBF58476D1CE4E5B9ull);
}

// Checks every launch, completion and message against slot safety and computes values.
class ValueSlotModel {
 public:
  explicit ValueSlotModel(const std::vector<ActorDescription>* actors)
      : actors_(actors), records_(actors->size()) {
    for (const ActorDescription& actor : *actors) {
      for (const OutputDescription& output : actor.outputs) {
        slots_[output.register_id].resize(static_cast<size_t>(output.slots));
        registers_[output.register_id] = &output;
      }
    }
  }

  void OnLaunch(ActorId id, const Firing& firing) {
    const ActorDescription& actor = (*actors_)[id];
    FiringRecord& record = running_[{id, firing.index}].record;
    running_[{id, firing.index}].firing = firing;
    for (size_t i = 0; i < actor.inputs.size(); ++i) {
      const SlotBinding& binding = firing.inputs[i];
      EXPECT_EQ(binding.sequence, firing.index * actor.period / actor.inputs[i].period);
      const SlotModel& slot = slots_[binding.register_id][binding.slot];
      EXPECT_EQ(slot.fill, binding.sequence) << actor.name << " reads an overwritten slot";
      EXPECT_TRUE(slot.complete) << actor.name << " reads a fill whose kernel has not finished";
      if (actor.inputs[i].phase == 1) {
        EXPECT_EQ(slot.reader_releases, ReaderCount(binding.register_id))
            << actor.name << " writes in place before every reader released";
      }
      record.read.push_back(slot.value);
    }
    for (size_t o = 0; o < actor.outputs.size(); ++o) {
      const OutputDescription& output = actor.outputs[o];
      const SlotBinding& binding = firing.outputs[o];
      EXPECT_EQ(binding.slot, binding.sequence % output.slots);
      SlotModel& slot = slots_[output.register_id][binding.slot];
      if (firing.output_fill_begins[o]) {
        if (slot.fill >= 0) {
          EXPECT_EQ(slot.releases, static_cast<int>(output.consumers.size()))
              << actor.name << " overwrites a slot a consumer still holds";
        }
        slot = SlotModel{binding.sequence, false, slot.value, 0, 0};
      } else {
        EXPECT_EQ(slot.fill, binding.sequence);
      }
    }
  }

  // The kernel finished: it read its inputs until now (they must still be there) and writes.
  void OnComplete(ActorId id, int64_t index) {
    const ActorDescription& actor = (*actors_)[id];
    auto found = running_.find({id, index});
    ASSERT_NE(found, running_.end()) << actor.name << " completes firing " << index;
    const Firing& firing = found->second.firing;
    FiringRecord& record = found->second.record;
    int64_t mixed = index;
    for (size_t i = 0; i < actor.inputs.size(); ++i) {
      const SlotBinding& binding = firing.inputs[i];
      const SlotModel& slot = slots_[binding.register_id][binding.slot];
      EXPECT_EQ(slot.fill, binding.sequence) << actor.name << "'s input was overwritten in flight";
      EXPECT_EQ(slot.value, record.read[i]) << actor.name << "'s input changed in flight";
      mixed = Mix(mixed, slot.value);
    }
    for (size_t o = 0; o < actor.outputs.size(); ++o) {
      SlotModel& slot = slots_[actor.outputs[o].register_id][firing.outputs[o].slot];
      if (actor.kind == ActorKind::kAccumulate) {
        // An accumulation of hashes: wraps around (unsigned), as a hash may.
        slot.value = firing.output_fill_begins[o]
                         ? mixed
                         : static_cast<int64_t>(static_cast<uint64_t>(slot.value) +
                                                static_cast<uint64_t>(mixed));
      } else if (actor.kind != ActorKind::kVariable || index == 0) {
        slot.value = Mix(mixed, static_cast<int64_t>(o));  // A variable writes only firing 0.
      }
      record.written.push_back(slot.value);
      if (plan::FiringEndsFill(index, actor.outputs[o].period / actor.period)) {
        slot.complete = true;
      }
    }
    if (actor.kind == ActorKind::kUpdate) {  // The optimizer changes the variable in place.
      SlotModel& variable = slots_[firing.inputs[1].register_id][firing.inputs[1].slot];
      variable.value = Mix(variable.value, record.read[0]);
      record.written.push_back(variable.value);
    }
    records_[id][index] = record;
    running_.erase(found);
  }

  void OnSend(ActorId from, const OutgoingMessage& message) {
    if (message.type != OutgoingMessage::Type::kRelease) return;
    SlotModel& slot = slots_[message.register_id][message.slot];
    EXPECT_EQ(slot.fill, message.sequence);
    ++slot.releases;
    for (const ConsumerDescription& c : registers_[message.register_id]->consumers) {
      if (c.actor == from && c.phase == 0) ++slot.reader_releases;
    }
  }

  // Per actor, per firing: what it read and wrote.
  const std::vector<std::map<int64_t, FiringRecord>>& records() const { return records_; }

 private:
  struct Running {
    Firing firing;
    FiringRecord record;
  };

  int ReaderCount(RegisterId id) const {
    int readers = 0;
    for (const ConsumerDescription& c : registers_.at(id)->consumers) readers += c.phase == 0;
    return readers;
  }

  const std::vector<ActorDescription>* actors_;
  std::map<RegisterId, std::vector<SlotModel>> slots_;
  std::map<RegisterId, const OutputDescription*> registers_;
  std::map<std::pair<ActorId, int64_t>, Running> running_;
  std::vector<std::map<int64_t, FiringRecord>> records_;
};

struct RunSummary {
  std::vector<std::map<int64_t, FiringRecord>> records;
  int most_in_flight = 0;  // Of any actor at any moment.
};

RunSummary RunRandomly(const proto::Plan& plan, uint64_t seed, bool reorder) {
  RunSummary summary;
  StatusOr<std::vector<ActorDescription>> described = DescribeActors(plan);
  EXPECT_TRUE(described.ok()) << described.status();
  if (!described.ok()) return summary;
  const std::vector<ActorDescription> actors = *described;
  ValueSlotModel model(&actors);
  ProtocolTestHost::Options options;
  options.order = ProtocolTestHost::Order::kRandom;
  options.seed = seed;
  options.complete_immediately = false;
  options.reorder_completions = reorder;
  options.record = false;
  options.on_launch = [&](ActorId id, const Firing& firing) { model.OnLaunch(id, firing); };
  options.on_complete = [&](ActorId id, int64_t index) { model.OnComplete(id, index); };
  options.on_send = [&](ActorId from, const OutgoingMessage& m) { model.OnSend(from, m); };
  ProtocolTestHost host(actors, options);
  host.Start();
  while (true) {
    StatusOr<bool> stepped = host.Step();
    EXPECT_TRUE(stepped.ok()) << stepped.status();
    if (!stepped.ok() || !*stepped) break;
    for (const ActorDescription& actor : actors) {
      const int in_flight = static_cast<int>(host.in_flight(actor.id).size());
      EXPECT_LE(in_flight, actor.max_in_flight) << actor.name;
      summary.most_in_flight = std::max(summary.most_in_flight, in_flight);
      ActorProtocol& protocol = host.protocol(actor.name);
      for (size_t o = 0; o < actor.outputs.size(); ++o) {
        EXPECT_LE(protocol.occupied_slots(static_cast<int>(o)), actor.outputs[o].slots);
      }
    }
    if (::testing::Test::HasFailure()) return summary;
  }
  for (const ActorDescription& actor : actors) {
    ActorProtocol& protocol = host.protocol(actor.name);
    EXPECT_TRUE(protocol.finished())
        << actor.name << " is " << WaitKindName(protocol.DescribeWait().kind);
    EXPECT_EQ(protocol.completed_firings(), actor.firings) << actor.name;
  }
  summary.records = model.records();
  return summary;
}

TEST(ActorProtocolInFlightTest, RandomSchedulesKeepSlotsSafeFinishAndComputeWhatOneAtATimeDoes) {
  constexpr int kPlans = 1000;
  int runs_with_several_in_flight = 0;
  for (int p = 0; p < kPlans; ++p) {
    const uint64_t plan_seed = 5000 + static_cast<uint64_t>(p);
    const proto::Plan one_at_a_time = RandomPlanMaker(plan_seed).Make();
    SCOPED_TRACE("plan seed " + std::to_string(plan_seed));
    const RunSummary reference = RunRandomly(one_at_a_time, plan_seed, false);
    if (::testing::Test::HasFailure()) return;
    for (int run = 0; run < 4; ++run) {
      proto::Plan plan = one_at_a_time;
      testing::RandomizeMaxInFlight(run < 2 ? 4 : 2, plan_seed * 7 + run, &plan);
      const bool reorder = run % 2 == 1;
      SCOPED_TRACE("run " + std::to_string(run) + (reorder ? ", reordered" : ", fifo"));
      const RunSummary summary = RunRandomly(plan, plan_seed * 31 + run, reorder);
      if (::testing::Test::HasFailure()) return;
      runs_with_several_in_flight += summary.most_in_flight > 1;
      ASSERT_EQ(summary.records.size(), reference.records.size());
      for (size_t a = 0; a < reference.records.size(); ++a) {
        ASSERT_TRUE(summary.records[a] == reference.records[a])
            << one_at_a_time.actor(static_cast<int>(a)).name()
            << " read or wrote other values than one at a time";
      }
    }
  }
  // The schedules did put several firings in flight (else the test proves nothing).
  EXPECT_GT(runs_with_several_in_flight, kPlans / 2);
}

}  // namespace
}  // namespace actors
}  // namespace softwire
