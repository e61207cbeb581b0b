#include "actors/kinds/sink_actor.h"

#include "plan/labels.h"

namespace softwire {
namespace actors {

Status CheckSinkActor(const ActorKindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(1, 1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(0, 0));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectPeriod(1, "one value per piece"));
  const proto::TensorDesc& value = check.input_register(0).tensor();
  int64_t elements = 1;
  for (int64_t dim : value.dims()) elements *= dim;
  if (value.dtype() != proto::DATA_TYPE_FLOAT32 || elements != 1) {
    return check.Error("reports a float32 scalar, but " +
                       plan::RegisterLabel(check.input_register(0)) + " holds something else");
  }
  if (check.def.sink().output().empty()) return check.Error("names no output");
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
