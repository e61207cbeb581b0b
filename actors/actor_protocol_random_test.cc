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
#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace {

using plan::testing::ActorSpec;
using plan::testing::PlanBuilder;
using testing::ProtocolTestHost;

// Random plans that cannot deadlock: per-piece actors form a DAG and may also read per-step
// values that depend only on variables (never on the current step's pieces); accumulated
// gradients go only to update actors, which close each variable's cycle.
class RandomPlanMaker {
 public:
  explicit RandomPlanMaker(uint64_t seed) : random_(seed) {}

  proto::Plan Make() {
    const int64_t pieces_per_step = Uniform(1, 3);
    PlanBuilder builder(Uniform(1, 3), pieces_per_step);
    std::vector<std::string> per_piece;
    std::vector<std::string> per_step;   // Safe for per-piece readers.
    std::vector<std::string> variables;  // Registers of variable actors.
    int registers = 0;
    auto new_register = [&](int max_slots, int64_t period) {
      const std::string name = "r" + std::to_string(registers++);
      builder.AddRegister(name, static_cast<int>(Uniform(1, max_slots)), period);
      return name;
    };
    const int sources = static_cast<int>(Uniform(1, 2));
    for (int s = 0; s < sources; ++s) {
      std::vector<std::string> outputs;
      for (int o = Uniform(1, 2); o > 0; --o) outputs.push_back(new_register(3, 1));
      builder.AddActor({"source" + std::to_string(s), proto::ACTOR_KIND_SOURCE, {}, outputs});
      per_piece.insert(per_piece.end(), outputs.begin(), outputs.end());
    }
    for (int v = Uniform(0, 2); v > 0; --v) {
      const std::string w = new_register(1, pieces_per_step);
      builder.AddActor({"variable" + std::to_string(v), proto::ACTOR_KIND_VARIABLE, {}, {w}});
      variables.push_back(w);
      per_step.push_back(w);
    }
    if (!variables.empty() && Uniform(0, 1) == 1) {
      const std::string p = new_register(2, pieces_per_step);
      builder.AddActor(
          {"per_step", proto::ACTOR_KIND_COMPUTE, {Pick(variables)}, {p}, pieces_per_step});
      per_step.push_back(p);
    }
    const int computes = static_cast<int>(Uniform(1, 5));
    for (int c = 0; c < computes; ++c) {
      const std::string name = "compute" + std::to_string(c);
      if (Uniform(0, 3) == 0) {  // A transfer: copy or boxing, "as the value".
        const std::string out = new_register(3, 1);
        builder.AddActor({name,
                          Uniform(0, 1) ? proto::ACTOR_KIND_COPY : proto::ACTOR_KIND_BOXING,
                          {Pick(per_piece)},
                          {out}});
        per_piece.push_back(out);
        continue;
      }
      std::vector<std::string> inputs;
      for (int i = Uniform(1, 3); i > 0; --i) inputs.push_back(Pick(per_piece));
      if (!per_step.empty() && Uniform(0, 1) == 1) inputs.push_back(Pick(per_step));
      std::vector<std::string> outputs;
      for (int o = Uniform(1, 2); o > 0; --o) outputs.push_back(new_register(3, 1));
      builder.AddActor({name, proto::ACTOR_KIND_COMPUTE, inputs, outputs});
      per_piece.insert(per_piece.end(), outputs.begin(), outputs.end());
    }
    for (size_t v = 0; v < variables.size(); ++v) {
      if (Uniform(0, 3) == 0) continue;  // A frozen variable: no update.
      const std::string g = new_register(2, pieces_per_step);
      builder.AddActor(
          {"acc" + std::to_string(v), proto::ACTOR_KIND_ACCUMULATE, {Pick(per_piece)}, {g}});
      builder.AddActor({"update" + std::to_string(v),
                        proto::ACTOR_KIND_UPDATE,
                        {g, variables[v]},
                        {},
                        0,
                        {variables[v]}});
    }
    for (int s = Uniform(0, 2); s > 0; --s) {
      builder.AddActor({"sink" + std::to_string(s), proto::ACTOR_KIND_SINK, {Pick(per_piece)}, {}});
    }
    return builder.Build();
  }

 private:
  int64_t Uniform(int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random_);
  }
  const std::string& Pick(const std::vector<std::string>& names) {
    return names[static_cast<size_t>(Uniform(0, static_cast<int64_t>(names.size()) - 1))];
  }
  std::mt19937_64 random_;
};

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
