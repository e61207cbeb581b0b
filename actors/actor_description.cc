#include "actors/actor_description.h"

#include <glog/logging.h>

#include "plan/actor_kind_rules.h"
#include "plan/labels.h"
#include "plan/plan_invariants.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace actors {

const char* ActorKindName(ActorKind kind) {
  // ActorKind mirrors proto::ActorKind in its order, one past UNSPECIFIED.
  return plan::ActorKindName(static_cast<proto::ActorKind>(static_cast<int>(kind) + 1));
}

namespace {

// The kind was checked (plan::CheckActorKind): an actor without one never gets here.
ActorKind KindOf(const proto::ActorDef& actor) {
  switch (actor.kind()) {
    case proto::ACTOR_KIND_SOURCE:
      return ActorKind::kSource;
    case proto::ACTOR_KIND_COMPUTE:
      return ActorKind::kCompute;
    case proto::ACTOR_KIND_VARIABLE:
      return ActorKind::kVariable;
    case proto::ACTOR_KIND_ACCUMULATE:
      return ActorKind::kAccumulate;
    case proto::ACTOR_KIND_UPDATE:
      return ActorKind::kUpdate;
    case proto::ACTOR_KIND_SINK:
      return ActorKind::kSink;
    case proto::ACTOR_KIND_COPY:
      return ActorKind::kCopy;
    case proto::ACTOR_KIND_SEND:
      return ActorKind::kSend;
    case proto::ACTOR_KIND_RECV:
      return ActorKind::kRecv;
    case proto::ACTOR_KIND_BOXING:
      return ActorKind::kBoxing;
    default:
      LOG(FATAL) << plan::ActorLabel(actor) << ": kind " << actor.kind()
                 << " passed plan::CheckActorKind but is not an actor kind";
  }
  return ActorKind::kCompute;  // Unreachable.
}

int PhaseOf(const proto::RegisterDef& r, ActorId consumer) {
  for (const proto::RegisterConsumer& c : r.consumer()) {
    if (c.actor() == consumer) return c.phase();
  }
  return 0;  // Unreachable after CheckProducersAndConsumers.
}

// Fills the description of `actor`; ids are known to be in range.
ActorDescription Describe(const proto::Plan& plan, const proto::ActorDef& actor) {
  ActorDescription description;
  description.id = actor.id();
  description.name = actor.name();
  description.kind = KindOf(actor);
  description.device = actor.device();
  description.period = actor.period();
  description.firings = actor.firings();
  description.max_in_flight = plan::MaxInFlight(actor);
  for (int64_t id : actor.input_register()) {
    const proto::RegisterDef& r = plan.register_def(id);
    description.inputs.push_back(InputDescription{r.id(), r.name(), r.producer(), r.period(),
                                                  PhaseOf(r, actor.id()), r.slots()});
  }
  for (int64_t id : actor.output_register()) {
    const proto::RegisterDef& r = plan.register_def(id);
    OutputDescription output{r.id(), r.name(), r.slots(), r.period(), {}};
    for (const proto::RegisterConsumer& c : r.consumer()) {
      output.consumers.push_back(ConsumerDescription{c.actor(), c.phase()});
    }
    description.outputs.push_back(std::move(output));
  }
  return description;
}

}  // namespace

StatusOr<std::vector<ActorDescription>> DescribeActors(const proto::Plan& plan) {
  SOFTWIRE_RETURN_IF_ERROR(plan::CheckPlanInvariants(plan));
  SOFTWIRE_RETURN_IF_ERROR(plan::CheckActorKindRules(plan));
  std::vector<ActorDescription> actors;
  actors.reserve(plan.actor_size());
  for (const proto::ActorDef& actor : plan.actor()) actors.push_back(Describe(plan, actor));
  return actors;
}

}  // namespace actors
}  // namespace softwire
