#include "actors/kinds/compute_actor.h"

#include "plan/labels.h"

namespace softwire {
namespace actors {

Status CheckComputeActor(const ActorKindCheck& check) {
  if (check.def.kernel().op_type().empty()) return check.Error("has no op type");
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, -1));
  if (check.actor.period != 1 && check.actor.period != check.pieces_per_step()) {
    return check.Error("has period " + std::to_string(check.actor.period) +
                       ", must be 1 or pieces_per_step " + std::to_string(check.pieces_per_step()));
  }
  for (int i = 0; i < check.def.output_register_size(); ++i) {
    const proto::RegisterDef& output = check.output_register(i);
    if (output.period() != check.actor.period) {
      return check.Error("writes " + plan::RegisterLabel(output) + " with period " +
                         std::to_string(output.period()) + ", must be its own period " +
                         std::to_string(check.actor.period) +
                         " (only accumulate actors write longer fills)");
    }
  }
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
