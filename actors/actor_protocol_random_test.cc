// Many random plans, each run under random message interleavings (order kept within each
// sender/receiver pair) and random kernel completion times. Every run must finish with every
// actor fired exactly `firings` times, and an independent model of every register slot, kept
// by watching launches, completions and messages, checks that no slot is ever overwritten
// while a consumer may still read it, that every firing reads the fill the firing rule names,
// and that an in-place writer starts only after every reader of the fill released it.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "actors/actor_protocol.h"
#include "actors/testing/protocol_test_host.h"
#include "actors/testing/random_plan_maker.h"
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace {

using testing::ProtocolTestHost;
using testing::RandomPlanMaker;

// What a slot holds, as seen from outside the protocol.
struct SlotModel {
  int64_t fill = -1;
  bool complete = false;
  int releases = 0;         // For `fill`.
  int reader_releases = 0;  // From phase-0 consumers.
};

// Checks every launch, completion and message against the firing rule and slot safety.
class SlotSafetyModel {
 public:
  explicit SlotSafetyModel(const std::vector<ActorDescription>* actors) : actors_(actors) {
    for (const ActorDescription& actor : *actors) {
      for (const OutputDescription& output : actor.outputs) {
        slots_[output.register_id].resize(output.slots);
        registers_[output.register_id] = &output;
      }
    }
  }

  void OnLaunch(ActorId id, const Firing& firing) {
    const ActorDescription& actor = (*actors_)[id];
    EXPECT_EQ(firing.first_piece, firing.index * actor.period);
    for (size_t i = 0; i < actor.inputs.size(); ++i) {
      const InputDescription& input = actor.inputs[i];
      const SlotBinding& binding = firing.inputs[i];
      EXPECT_EQ(binding.sequence, firing.index * actor.period / input.period) << actor.name;
      const SlotModel& slot = slots_[input.register_id][binding.slot];
      EXPECT_EQ(slot.fill, binding.sequence) << actor.name << " reads an overwritten slot";
      EXPECT_TRUE(slot.complete) << actor.name << " reads an incomplete fill";
      if (input.phase == 1) {
        EXPECT_EQ(slot.reader_releases, ReaderCount(input.register_id))
            << actor.name << " writes in place before every reader released";
      }
    }
    for (size_t o = 0; o < actor.outputs.size(); ++o) {
      const OutputDescription& output = actor.outputs[o];
      const SlotBinding& binding = firing.outputs[o];
      EXPECT_EQ(binding.sequence, firing.index * actor.period / output.period);
      EXPECT_EQ(binding.slot, binding.sequence % output.slots);
      const bool begins = (firing.index * actor.period) % output.period == 0;
      EXPECT_EQ(firing.output_fill_begins[o], begins);
      SlotModel& slot = slots_[output.register_id][binding.slot];
      if (begins) {
        if (slot.fill >= 0) {
          EXPECT_EQ(slot.releases, static_cast<int>(output.consumers.size()))
              << actor.name << " overwrites a slot a consumer still holds";
        }
        slot = SlotModel{binding.sequence, false, 0, 0};
      } else {
        EXPECT_EQ(slot.fill, binding.sequence);
      }
    }
    running_[id] = firing;
  }

  void OnComplete(ActorId id, int64_t index) {
    const ActorDescription& actor = (*actors_)[id];
    const Firing& firing = running_[id];
    ASSERT_EQ(firing.index, index);
    for (size_t o = 0; o < actor.outputs.size(); ++o) {
      if (((index + 1) * actor.period) % actor.outputs[o].period != 0) continue;
      slots_[actor.outputs[o].register_id][firing.outputs[o].slot].complete = true;
    }
  }

  void OnSend(ActorId from, const OutgoingMessage& message) {
    if (message.type != OutgoingMessage::Type::kRelease) return;
    SlotModel& slot = slots_[message.release().register_id][message.release().slot];
    EXPECT_EQ(slot.fill, message.release().sequence);
    ++slot.releases;
    for (const ConsumerDescription& c : registers_[message.release().register_id]->consumers) {
      if (c.actor == from && c.phase == 0) ++slot.reader_releases;
    }
  }

 private:
  int ReaderCount(RegisterId id) const {
    int readers = 0;
    for (const ConsumerDescription& c : registers_.at(id)->consumers) readers += c.phase == 0;
    return readers;
  }

  const std::vector<ActorDescription>* actors_;
  std::map<RegisterId, std::vector<SlotModel>> slots_;
  std::map<RegisterId, const OutputDescription*> registers_;
  std::map<ActorId, Firing> running_;
};

void RunRandomly(const proto::Plan& plan, uint64_t seed, bool complete_immediately) {
  StatusOr<std::vector<ActorDescription>> described = DescribeActors(plan);
  ASSERT_TRUE(described.ok()) << described.status();
  const std::vector<ActorDescription> actors = *described;
  SlotSafetyModel model(&actors);
  ProtocolTestHost::Options options;
  options.order = ProtocolTestHost::Order::kRandom;
  options.seed = seed;
  options.complete_immediately = complete_immediately;
  options.record = false;
  options.on_launch = [&](ActorId id, const Firing& firing) { model.OnLaunch(id, firing); };
  options.on_complete = [&](ActorId id, int64_t index) { model.OnComplete(id, index); };
  options.on_send = [&](ActorId from, const OutgoingMessage& m) { model.OnSend(from, m); };
  ProtocolTestHost host(actors, options);
  host.Start();
  while (true) {
    StatusOr<bool> stepped = host.Step();
    ASSERT_TRUE(stepped.ok()) << stepped.status();
    if (!*stepped) break;
    for (const ActorDescription& actor : actors) {
      ActorProtocol& protocol = host.protocol(actor.name);
      for (size_t o = 0; o < actor.outputs.size(); ++o) {
        ASSERT_LE(protocol.occupied_slots(static_cast<int>(o)), actor.outputs[o].slots);
      }
    }
  }
  for (const ActorDescription& actor : actors) {
    ActorProtocol& protocol = host.protocol(actor.name);
    EXPECT_TRUE(protocol.finished())
        << actor.name << " is " << WaitKindName(protocol.DescribeWait().kind);
    EXPECT_EQ(protocol.completed_firings(), actor.firings) << actor.name;
  }
}

TEST(ActorProtocolRandomTest, RandomPlansFinishUnderRandomInterleavingsWithinTheirSlots) {
  constexpr int kPlans = 300;
  constexpr int kRunsPerPlan = 4;
  for (int p = 0; p < kPlans; ++p) {
    const proto::Plan plan = RandomPlanMaker(1000 + p).Make();
    for (int run = 0; run < kRunsPerPlan; ++run) {
      SCOPED_TRACE("plan seed " + std::to_string(1000 + p) + ", run " + std::to_string(run));
      RunRandomly(plan, static_cast<uint64_t>(p * kRunsPerPlan + run), run % 2 == 0);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace actors
}  // namespace softwire
