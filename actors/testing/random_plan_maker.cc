#include "actors/testing/random_plan_maker.h"

#include "plan/testing/plan_builder.h"

namespace softwire {
namespace actors {
namespace testing {

using plan::testing::PlanBuilder;

proto::Plan RandomPlanMaker::Make() {
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

int64_t RandomPlanMaker::Uniform(int64_t low, int64_t high) {
  return std::uniform_int_distribution<int64_t>(low, high)(random_);
}

const std::string& RandomPlanMaker::Pick(const std::vector<std::string>& names) {
  return names[static_cast<size_t>(Uniform(0, static_cast<int64_t>(names.size()) - 1))];
}

void RandomizeMaxInFlight(int max_in_flight, uint64_t seed, proto::Plan* plan) {
  std::mt19937_64 random(seed);
  for (proto::ActorDef& actor : *plan->mutable_actor()) {
    if (actor.kind() != proto::ACTOR_KIND_COMPUTE && actor.kind() != proto::ACTOR_KIND_COPY) {
      continue;
    }
    actor.set_max_in_flight(std::uniform_int_distribution<int>(1, max_in_flight)(random));
  }
}

std::vector<int64_t> RandomQueueKeys(const proto::Plan& plan, uint64_t seed) {
  std::mt19937_64 random(seed);
  auto uniform = [&random](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random);
  };
  std::vector<int64_t> keys(static_cast<size_t>(plan.actor_size()), 0);
  if (uniform(0, 3) == 0) return keys;  // One queue for all.
  for (int64_t& key : keys) key = uniform(0, 2) == 0 ? -1 : uniform(0, 1);
  return keys;
}

}  // namespace testing
}  // namespace actors
}  // namespace softwire
