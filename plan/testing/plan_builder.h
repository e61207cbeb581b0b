// PlanBuilder: small valid plans for tests, written as a list of registers and actors by name.
//
//   PlanBuilder plan(/*steps=*/2, /*pieces_per_step=*/1);
//   plan.AddRegister("x", /*slots=*/2);
//   plan.AddRegister("y", /*slots=*/1);
//   plan.AddActor({"source", proto::ACTOR_KIND_SOURCE, {}, {"x"}});
//   plan.AddActor({"relu", proto::ACTOR_KIND_COMPUTE, {"x"}, {"y"}});
//   plan.AddActor({"sink", proto::ACTOR_KIND_SINK, {"y"}, {}});
//   proto::Plan built = plan.Build();
//
// Build() fills what the plan checks (plan_invariants.h, actor_kind_rules.h) ask for: ids,
// producers, consumers and phases, firings, one cpu device whose arena holds every register
// back to back, and the settings each kind needs (dataset, variable, optimizer, sink output).
// Registers hold a float32 scalar unless given dims. Tests then break one thing to check an
// error. Test-only; aborts on misuse (an unknown register name).
#ifndef SOFTWIRE_PLAN_TESTING_PLAN_BUILDER_H_
#define SOFTWIRE_PLAN_TESTING_PLAN_BUILDER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "proto/plan.pb.h"

namespace softwire {
namespace plan {
namespace testing {

struct ActorSpec {
  ActorSpec(std::string name, proto::ActorKind kind, std::vector<std::string> inputs,
            std::vector<std::string> outputs, int64_t period = 0,
            std::vector<std::string> phase1_inputs = {})
      : name(std::move(name)),
        kind(kind),
        inputs(std::move(inputs)),
        outputs(std::move(outputs)),
        period(period),
        phase1_inputs(std::move(phase1_inputs)) {}

  std::string name;
  proto::ActorKind kind = proto::ACTOR_KIND_COMPUTE;
  std::vector<std::string> inputs;   // Register names, kernel order.
  std::vector<std::string> outputs;  // Register names, kernel order.
  int64_t period = 0;                // 0: 1, or pieces_per_step for variable and update actors.
  std::vector<std::string> phase1_inputs;  // Inputs it writes in place (update: its variable).
};

class PlanBuilder {
 public:
  PlanBuilder(int64_t steps, int64_t pieces_per_step);

  // period 0 means 1 (pieces_per_step for a register written by a variable or accumulate
  // actor: the builder fixes it in Build()).
  PlanBuilder& AddRegister(const std::string& name, int slots, int64_t period = 0,
                           std::vector<int64_t> dims = {});
  PlanBuilder& AddActor(const ActorSpec& spec);

  proto::Plan Build() const;

 private:
  int64_t steps_;
  int64_t pieces_per_step_;
  std::vector<proto::RegisterDef> registers_;
  std::vector<ActorSpec> actors_;
};

}  // namespace testing
}  // namespace plan
}  // namespace softwire

#endif  // SOFTWIRE_PLAN_TESTING_PLAN_BUILDER_H_
