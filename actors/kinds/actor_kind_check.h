// ActorKindCheck: what one actor kind's plan rules are checked against, and the helpers they
// share. Each kind file (source_actor.h, ...) holds one Check<Kind>Actor function built from
// these helpers; CheckActorKind picks the one for the actor's kind. Internal to actors/.
#ifndef SOFTWIRE_ACTORS_KINDS_ACTOR_KIND_CHECK_H_
#define SOFTWIRE_ACTORS_KINDS_ACTOR_KIND_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "actors/actor_description.h"
#include "base/status.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace actors {

struct ActorKindCheck {
  const proto::Plan& plan;
  const proto::ActorDef& def;
  const ActorDescription& actor;
  const std::vector<ActorDescription>& actors;  // Every actor; index == id.

  // InvalidArgument "actor 'name' (id): <kind> actor <what>".
  Status Error(const std::string& what) const;

  int64_t pieces_per_step() const { return plan.schedule().pieces_per_step(); }
  const proto::RegisterDef& input_register(int index) const;
  const proto::RegisterDef& output_register(int index) const;

  // Each fails with an Error naming the expectation and what the actor has.
  Status ExpectInputs(int min, int max) const;
  Status ExpectOutputs(int min, int max) const;
  Status ExpectPeriod(int64_t period, const char* meaning) const;
  // Every register the actor reads and writes has the actor's own period ("as the value").
  Status ExpectRegistersHaveActorPeriod() const;
};

// Runs the rules of `check.actor.kind`.
Status CheckActorKind(const ActorKindCheck& check);

}  // namespace actors
}  // namespace softwire

#endif  // SOFTWIRE_ACTORS_KINDS_ACTOR_KIND_CHECK_H_
