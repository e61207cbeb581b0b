#include "actors/kinds/source_actor.h"

namespace softwire {
namespace actors {

Status CheckSourceActor(const ActorKindCheck& check) {
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectInputs(0, 0));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectOutputs(1, -1));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectPeriod(1, "one piece per firing"));
  SOFTWIRE_RETURN_IF_ERROR(check.ExpectRegistersHaveActorPeriod());
  if (!check.def.has_source()) return check.Error("has no source settings");
  const proto::SourceActorDef& source = check.def.source();
  if (source.dataset().dataset_case() == proto::DataSource::DATASET_NOT_SET) {
    return check.Error("has no dataset");
  }
  if (source.dataset().output_size() != check.def.output_register_size()) {
    return check.Error("writes " + std::to_string(check.def.output_register_size()) +
                       " outputs, but its dataset has " +
                       std::to_string(source.dataset().output_size()));
  }
  if (source.sample_begin() < 0 || source.sample_end() <= source.sample_begin()) {
    return check.Error("has an empty sample slice [" + std::to_string(source.sample_begin()) +
                       ", " + std::to_string(source.sample_end()) + ")");
  }
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
