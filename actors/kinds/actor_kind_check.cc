#include "actors/kinds/actor_kind_check.h"

#include "actors/kinds/accumulate_actor.h"
#include "actors/kinds/boxing_actor.h"
#include "actors/kinds/compute_actor.h"
#include "actors/kinds/copy_actor.h"
#include "actors/kinds/recv_actor.h"
#include "actors/kinds/send_actor.h"
#include "actors/kinds/sink_actor.h"
#include "actors/kinds/source_actor.h"
#include "actors/kinds/update_actor.h"
#include "actors/kinds/variable_actor.h"
#include "plan/labels.h"

namespace softwire {
namespace actors {
namespace {

std::string CountRange(int min, int max) {
  if (min == max) return std::to_string(min);
  if (max < 0) return "at least " + std::to_string(min);
  return std::to_string(min) + " to " + std::to_string(max);
}

}  // namespace

Status ActorKindCheck::Error(const std::string& what) const {
  return InvalidArgumentError(plan::ActorLabel(def) + ": " + ActorKindName(actor.kind) + " actor " +
                              what);
}

const proto::RegisterDef& ActorKindCheck::input_register(int index) const {
  return plan.register_def(def.input_register(index));
}

const proto::RegisterDef& ActorKindCheck::output_register(int index) const {
  return plan.register_def(def.output_register(index));
}

Status ActorKindCheck::ExpectInputs(int min, int max) const {
  const int count = def.input_register_size();
  if (count >= min && (max < 0 || count <= max)) return Status::Ok();
  return Error("takes " + CountRange(min, max) + " inputs, has " + std::to_string(count));
}

Status ActorKindCheck::ExpectOutputs(int min, int max) const {
  const int count = def.output_register_size();
  if (count >= min && (max < 0 || count <= max)) return Status::Ok();
  return Error("writes " + CountRange(min, max) + " outputs, has " + std::to_string(count));
}

Status ActorKindCheck::ExpectPeriod(int64_t period, const char* meaning) const {
  if (actor.period == period) return Status::Ok();
  return Error("has period " + std::to_string(actor.period) + ", must be " +
               std::to_string(period) + " (" + meaning + ")");
}

Status ActorKindCheck::ExpectRegistersHaveActorPeriod() const {
  auto check = [&](const proto::RegisterDef& r) {
    if (r.period() == actor.period) return Status::Ok();
    return Error("moves a value as it is, so " + plan::RegisterLabel(r) + " must have its period " +
                 std::to_string(actor.period) + ", has " + std::to_string(r.period()));
  };
  for (int i = 0; i < def.input_register_size(); ++i) {
    SOFTWIRE_RETURN_IF_ERROR(check(input_register(i)));
  }
  for (int i = 0; i < def.output_register_size(); ++i) {
    SOFTWIRE_RETURN_IF_ERROR(check(output_register(i)));
  }
  return Status::Ok();
}

Status CheckActorKind(const ActorKindCheck& check) {
  switch (check.actor.kind) {
    case ActorKind::kSource:
      return CheckSourceActor(check);
    case ActorKind::kCompute:
      return CheckComputeActor(check);
    case ActorKind::kVariable:
      return CheckVariableActor(check);
    case ActorKind::kAccumulate:
      return CheckAccumulateActor(check);
    case ActorKind::kUpdate:
      return CheckUpdateActor(check);
    case ActorKind::kSink:
      return CheckSinkActor(check);
    case ActorKind::kCopy:
      return CheckCopyActor(check);
    case ActorKind::kSend:
      return CheckSendActor(check);
    case ActorKind::kRecv:
      return CheckRecvActor(check);
    case ActorKind::kBoxing:
      return CheckBoxingActor(check);
  }
  return check.Error("has an unknown kind");
}

}  // namespace actors
}  // namespace softwire
