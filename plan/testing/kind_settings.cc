#include "plan/testing/kind_settings.h"

namespace softwire {
namespace plan {
namespace testing {

bool FiresOncePerStep(proto::ActorKind kind) {
  return kind == proto::ACTOR_KIND_VARIABLE || kind == proto::ACTOR_KIND_UPDATE;
}

void SetKindSettings(const KindNames& names, int64_t pieces_per_step, proto::ActorDef* actor) {
  switch (actor->kind()) {
    case proto::ACTOR_KIND_SOURCE: {
      proto::DataSource* dataset = actor->mutable_source()->mutable_dataset();
      dataset->set_name(names.dataset);
      dataset->mutable_synthetic()->set_seed(1);
      for (const std::string& output : names.outputs) {
        proto::SourceOutput* source_output = dataset->add_output();
        source_output->set_name(output);
        source_output->set_dtype(proto::DATA_TYPE_FLOAT32);
      }
      actor->mutable_source()->set_sample_begin(0);
      actor->mutable_source()->set_sample_end(1);
      break;
    }
    case proto::ACTOR_KIND_VARIABLE:
      actor->mutable_variable()->set_variable(names.variable);
      actor->mutable_variable()->set_split_axis(-1);
      break;
    case proto::ACTOR_KIND_UPDATE:
      actor->mutable_update()->mutable_optimizer()->mutable_sgd()->set_learning_rate(0.1);
      actor->mutable_update()->set_gradient_scale(1.0 / static_cast<double>(pieces_per_step));
      break;
    case proto::ACTOR_KIND_SINK:
      actor->mutable_sink()->set_output(names.sink_output);
      break;
    default:
      break;
  }
}

}  // namespace testing
}  // namespace plan
}  // namespace softwire
