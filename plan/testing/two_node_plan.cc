#include "plan/testing/two_node_plan.h"

#include <string>
#include <vector>

namespace softwire {
namespace plan {
namespace testing {
namespace {

constexpr int kSlots = 2;
constexpr int64_t kBytesPerSlot = 4;

void AddDevice(const std::string& node, proto::Plan* plan) {
  proto::PlanDevice* device = plan->add_device();
  device->set_id(plan->device_size() - 1);
  device->set_node(node);
  device->set_name("cpu:0");
  device->set_kind(proto::DEVICE_KIND_CPU);
}

void AddRegister(const std::string& name, int device, int64_t producer,
                 const std::vector<int64_t>& consumers, proto::Plan* plan) {
  proto::RegisterDef* r = plan->add_register_def();
  r->set_id(plan->register_def_size() - 1);
  r->set_name(name);
  r->set_device(device);
  r->set_producer(producer);
  r->set_slots(kSlots);
  r->set_bytes_per_slot(kBytesPerSlot);
  r->set_period(1);
  r->mutable_tensor()->set_dtype(proto::DATA_TYPE_FLOAT32);
  proto::PlanDevice* arena = plan->mutable_device(device);
  r->set_offset(arena->planned_bytes());
  arena->set_planned_bytes(arena->planned_bytes() + kSlots * kBytesPerSlot);
  arena->set_register_bytes(arena->planned_bytes());
  for (int64_t consumer : consumers) r->add_consumer()->set_actor(consumer);
}

void AddActor(const std::string& name, proto::ActorKind kind, int device,
              const std::vector<int64_t>& inputs, const std::vector<int64_t>& outputs,
              proto::Plan* plan) {
  proto::ActorDef* actor = plan->add_actor();
  actor->set_id(plan->actor_size() - 1);
  actor->set_name(name);
  actor->set_kind(kind);
  actor->set_device(device);
  actor->set_period(1);
  actor->set_firings(plan->schedule().steps() * plan->schedule().pieces_per_step());
  for (int64_t r : inputs) actor->add_input_register(r);
  for (int64_t r : outputs) actor->add_output_register(r);
}

}  // namespace

proto::Plan TwoNodePlan() {
  proto::Plan plan;
  plan.set_job_name("two_nodes");
  plan.mutable_schedule()->set_steps(2);
  plan.mutable_schedule()->set_pieces_per_step(1);
  AddDevice("node0", &plan);
  AddDevice("node1", &plan);
  AddRegister("x", 0, /*producer=*/0, {1}, &plan);
  AddRegister("wire", 0, /*producer=*/1, {2}, &plan);
  AddRegister("y", 1, /*producer=*/2, {3}, &plan);
  AddRegister("z", 1, /*producer=*/3, {4}, &plan);
  AddActor("source", proto::ACTOR_KIND_SOURCE, 0, {}, {0}, &plan);
  AddActor("send", proto::ACTOR_KIND_SEND, 0, {0}, {1}, &plan);
  AddActor("recv", proto::ACTOR_KIND_RECV, 1, {1}, {2}, &plan);
  AddActor("relu", proto::ACTOR_KIND_COMPUTE, 1, {2}, {3}, &plan);
  AddActor("sink", proto::ACTOR_KIND_SINK, 0, {3}, {}, &plan);
  return plan;
}

}  // namespace testing
}  // namespace plan
}  // namespace softwire
