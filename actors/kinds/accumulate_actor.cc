#include "actors/kinds/accumulate_actor.h"

#include "plan/labels.h"

namespace softwire {
namespace actors {

Status CheckAccumulateActor(const ActorKindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectPeriod(1, "one piece per firing"));
  const proto::RegisterDef& input = check.input_register(0);
  if (input.period() != 1) {
    return check.Error("sums a per-piece value, but " + plan::RegisterLabel(input) +
                       " has period " + std::to_string(input.period()));
  }
  const proto::RegisterDef& sum = check.output_register(0);
  if (sum.period() != check.pieces_per_step()) {
    return check.Error("writes a per-step sum, so " + plan::RegisterLabel(sum) +
                       " must have period " + std::to_string(check.pieces_per_step()) + ", has " +
                       std::to_string(sum.period()));
  }
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
