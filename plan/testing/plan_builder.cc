#include "plan/testing/plan_builder.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "plan/testing/kind_settings.h"

namespace softwire {
namespace plan {
namespace testing {

PlanBuilder::PlanBuilder(int64_t steps, int64_t pieces_per_step)
    : steps_(steps), pieces_per_step_(pieces_per_step) {}

PlanBuilder& PlanBuilder::AddRegister(const std::string& name, int slots, int64_t period,
                                      std::vector<int64_t> dims) {
  proto::RegisterDef r;
  r.set_id(static_cast<int64_t>(registers_.size()));
  r.set_name(name);
  r.set_slots(slots);
  r.set_period(period);
  r.mutable_tensor()->set_dtype(proto::DATA_TYPE_FLOAT32);
  for (int64_t dim : dims) r.mutable_tensor()->add_dims(dim);
  registers_.push_back(r);
  return *this;
}

PlanBuilder& PlanBuilder::AddActor(const ActorSpec& spec) {
  actors_.push_back(spec);
  return *this;
}

proto::Plan PlanBuilder::Build() const {
  proto::Plan plan;
  plan.set_job_name("test");
  plan.mutable_schedule()->set_steps(steps_);
  plan.mutable_schedule()->set_pieces_per_step(pieces_per_step_);
  plan.mutable_schedule()->set_micro_batch_size(1);
  const int64_t total_pieces = steps_ * pieces_per_step_;
  std::map<std::string, int64_t> register_ids;
  for (const proto::RegisterDef& r : registers_) {
    *plan.add_register_def() = r;
    register_ids[r.name()] = r.id();
  }
  auto id_of = [&](const std::string& name) {
    if (register_ids.count(name) == 0) {
      // plan/ does not use glog; a misused builder is a broken test, so stop here.
      std::fprintf(stderr, "PlanBuilder: unknown register '%s'\n", name.c_str());
      std::abort();
    }
    return register_ids[name];
  };
  for (const ActorSpec& spec : actors_) {
    proto::ActorDef* actor = plan.add_actor();
    actor->set_id(plan.actor_size() - 1);
    actor->set_name(spec.name);
    actor->set_kind(spec.kind);
    int64_t period = spec.period;
    if (period == 0) period = FiresOncePerStep(spec.kind) ? pieces_per_step_ : 1;
    actor->set_period(period);
    actor->set_firings(total_pieces / period);
    actor->mutable_kernel()->set_op_type(spec.kind == proto::ACTOR_KIND_UPDATE ? "sgd_update"
                                                                               : "identity");
    for (const std::string& output : spec.outputs) {
      proto::RegisterDef* r = plan.mutable_register_def(id_of(output));
      r->set_producer(actor->id());
      if (r->period() == 0) {
        const bool per_step =
            spec.kind == proto::ACTOR_KIND_VARIABLE || spec.kind == proto::ACTOR_KIND_ACCUMULATE;
        r->set_period(per_step ? pieces_per_step_ : period);
      }
      actor->add_output_register(r->id());
    }
    for (const std::string& input : spec.inputs) {
      const int64_t id = id_of(input);
      actor->add_input_register(id);
      proto::RegisterDef* r = plan.mutable_register_def(id);
      bool listed = false;
      for (const proto::RegisterConsumer& c : r->consumer()) listed |= c.actor() == actor->id();
      if (listed) continue;
      proto::RegisterConsumer* consumer = r->add_consumer();
      consumer->set_actor(actor->id());
      const bool writer = std::find(spec.phase1_inputs.begin(), spec.phase1_inputs.end(), input) !=
                          spec.phase1_inputs.end();
      consumer->set_phase(writer ? 1 : 0);
    }
    KindNames names;
    names.dataset = spec.name;
    names.outputs = spec.outputs;
    names.variable = spec.outputs.empty() ? spec.name : spec.outputs[0];
    names.sink_output = spec.inputs.empty() ? spec.name : spec.inputs[0];
    SetKindSettings(names, pieces_per_step_, actor);
    if (spec.kind == proto::ACTOR_KIND_SINK) {
      proto::PlanOutput* output = plan.add_output();
      output->set_name(actor->sink().output());
      output->set_sink_actor(actor->id());
    }
  }
  int64_t offset = 0;
  for (proto::RegisterDef& r : *plan.mutable_register_def()) {
    if (r.period() == 0) r.set_period(1);
    int64_t bytes = 4;
    for (int64_t dim : r.tensor().dims()) bytes *= dim;
    r.set_bytes_per_slot(bytes);
    r.set_offset(offset);
    offset += bytes * r.slots();
  }
  proto::PlanDevice* device = plan.add_device();
  device->set_id(0);
  device->set_node("node0");
  device->set_name("cpu:0");
  device->set_kind(proto::DEVICE_KIND_CPU);
  device->set_planned_bytes(offset);
  device->set_register_bytes(offset);
  return plan;
}

}  // namespace testing
}  // namespace plan
}  // namespace softwire
