#include "actors/actor_description.h"

#include "actors/kinds/actor_kind_check.h"
#include "plan/labels.h"
#include "plan/plan_invariants.h"
#include "proto/plan.pb.h"

namespace softwire {
namespace actors {

const char* ActorKindName(ActorKind kind) {
  switch (kind) {
    case ActorKind::kSource:
      return "source";
    case ActorKind::kCompute:
      return "compute";
    case ActorKind::kVariable:
      return "variable";
    case ActorKind::kAccumulate:
      return "accumulate";
    case ActorKind::kUpdate:
      return "update";
    case ActorKind::kSink:
      return "sink";
    case ActorKind::kCopy:
      return "copy";
    case ActorKind::kSend:
      return "send";
    case ActorKind::kRecv:
      return "recv";
    case ActorKind::kBoxing:
      return "boxing";
  }
  return "unknown";
}

namespace {

StatusOr<ActorKind> KindOf(const proto::ActorDef& actor) {
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
      return InvalidArgumentError(plan::ActorLabel(actor) + ": kind " +
                                  std::to_string(actor.kind()) + " is not an actor kind");
  }
}

int PhaseOf(const proto::RegisterDef& r, ActorId consumer) {
  for (const proto::RegisterConsumer& c : r.consumer()) {
    if (c.actor() == consumer) return c.phase();
  }
  return 0;  // Unreachable after CheckProducersAndConsumers.
}

// Fills the description of `actor`; ids are known to be in range.
StatusOr<ActorDescription> Describe(const proto::Plan& plan, const proto::ActorDef& actor) {
  ActorDescription description;
  description.id = actor.id();
  description.name = actor.name();
  SOFTWIRE_ASSIGN_OR_RETURN(description.kind, KindOf(actor));
  description.device = actor.device();
  description.period = actor.period();
  description.firings = actor.firings();
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

// PlanOutputs are observed by sink actors reporting them; variable parts live in registers
// that variable actors write.
Status CheckOutputsAndVariables(const proto::Plan& plan,
                                const std::vector<ActorDescription>& actors) {
  for (const proto::PlanOutput& output : plan.output()) {
    const proto::ActorDef& sink = plan.actor(output.sink_actor());
    if (actors[sink.id()].kind != ActorKind::kSink || sink.sink().output() != output.name()) {
      return InvalidArgumentError("output '" + output.name() + "': " + plan::ActorLabel(sink) +
                                  " is not a sink reporting it");
    }
  }
  for (const proto::PlanVariable& variable : plan.variable()) {
    for (const proto::VariablePart& part : variable.part()) {
      const proto::RegisterDef& r = plan.register_def(part.register_id());
      if (actors[r.producer()].kind != ActorKind::kVariable) {
        return InvalidArgumentError("variable '" + variable.name() + "': part " +
                                    plan::RegisterLabel(r) + " is not written by a variable actor");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<ActorDescription>> DescribeActors(const proto::Plan& plan) {
  SOFTWIRE_RETURN_IF_ERROR(plan::CheckPlanInvariants(plan));
  std::vector<ActorDescription> actors;
  actors.reserve(plan.actor_size());
  for (const proto::ActorDef& actor : plan.actor()) {
    SOFTWIRE_ASSIGN_OR_RETURN(ActorDescription description, Describe(plan, actor));
    actors.push_back(std::move(description));
  }
  for (const proto::ActorDef& actor : plan.actor()) {
    SOFTWIRE_RETURN_IF_ERROR(
        CheckActorKind(ActorKindCheck{plan, actor, actors[actor.id()], actors}));
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckOutputsAndVariables(plan, actors));
  return actors;
}

}  // namespace actors
}  // namespace softwire
