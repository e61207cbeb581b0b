#include "bench/allreduce/ring_plan.h"

#include <glog/logging.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "runtime/host/test_plans.h"

namespace softwire {
namespace bench {
namespace {

using runtime::testing::TestActorSpec;

void SetInts(proto::ActorDef* actor, const std::string& name, const std::vector<int64_t>& values) {
  proto::Attribute* attribute = actor->mutable_kernel()->add_attr();
  attribute->set_name(name);
  for (int64_t value : values) attribute->mutable_ints()->add_value(value);
}

}  // namespace

proto::Plan RingAllReducePlan(int64_t bytes, int sub_chunks, bool range_views) {
  CHECK_GE(bytes, 64);
  CHECK_GE(sub_chunks, 1);
  const int members = 2;
  const int64_t elements = bytes / 4;
  const int chunks = members * sub_chunks;
  std::vector<int64_t> sizes;
  for (int q = 0; q < chunks; ++q)
    sizes.push_back((q + 1) * elements / chunks - q * elements / chunks);
  const auto at = [](const std::string& name, int member) {
    return name + "@" + std::to_string(member);
  };
  const auto chunk = [](int q) { return "all_reduce.c" + std::to_string(q); };
  std::vector<int64_t> starts;  // Element at which chunk q starts in x.
  for (int q = 0; q < chunks; ++q) starts.push_back(q * elements / chunks);
  // Where member m's ring reads chunk q: its split's output, or (range views) x@m itself.
  const auto own = [&](int q, int m) {
    return range_views ? at("x", m) : at("split." + std::to_string(q), m);
  };
  // Kernel inputs read as a range of x: actor name -> (input index, chunk).
  std::map<std::string, std::pair<int, int>> ranges;

  runtime::testing::TestPlan builder(/*steps=*/1, /*pieces_per_step=*/1);
  std::vector<std::string> wires;
  // Registers, then actors (TestPlan resolves names when actors are added).
  for (int m = 0; m < members; ++m) {
    builder.Register(at("x", m), 1, {elements}).Register(at("y", m), 1, {elements});
    for (int q = 0; q < chunks && !range_views; ++q)
      builder.Register(at("split." + std::to_string(q), m), 1, {sizes[q]});
  }
  for (int q = 0; q < chunks; ++q) {
    const int owner = q / sub_chunks;
    const int other = 1 - owner;
    // plan_registers' slots for a wire register: about 4 MiB in flight, 2 to 8.
    const int wire_slots = static_cast<int>(
        std::clamp<int64_t>(((int64_t{4} << 20) + sizes[q] * 4 - 1) / (sizes[q] * 4), 2, 8));
    const std::string reduce = chunk(q) + ".s1.copy";
    const std::string gather = chunk(q) + ".g1";
    builder.Register("wire:" + at(reduce, owner), wire_slots, {sizes[q]})
        .Register(at(reduce, owner), 1, {sizes[q]})
        .Register(at(chunk(q) + ".s1.add", owner), 1, {sizes[q]})
        .Register("wire:" + at(gather, other), wire_slots, {sizes[q]})
        .Register(at(gather, other), 1, {sizes[q]});
    wires.push_back("wire:" + at(reduce, owner));
    wires.push_back("wire:" + at(gather, other));
  }
  for (int m = 0; m < members; ++m) {
    builder.Actor(TestActorSpec(at("source", m), proto::ACTOR_KIND_SOURCE, "noop", {}, {at("x", m)})
                      .OnDevice(m));
    if (range_views) continue;  // fold_views made the split's chunks ranges of x.
    std::vector<std::string> split;
    for (int q = 0; q < chunks; ++q) split.push_back(at("split." + std::to_string(q), m));
    builder.Actor(TestActorSpec(at("all_reduce.split", m), proto::ACTOR_KIND_BOXING, "flat_split",
                                {at("x", m)}, split)
                      .OnDevice(m));
  }
  for (int q = 0; q < chunks; ++q) {
    const int owner = q / sub_chunks;
    const int other = 1 - owner;
    const std::string reduce = chunk(q) + ".s1.copy";
    const std::string add = chunk(q) + ".s1.add";
    const std::string gather = chunk(q) + ".g1";
    builder.Actor(TestActorSpec("send:" + at(reduce, owner), proto::ACTOR_KIND_SEND, "copy",
                                {own(q, other)}, {"wire:" + at(reduce, owner)})
                      .OnDevice(other)
                      .OnQueue(1));
    builder.Actor(TestActorSpec("recv:" + at(reduce, owner), proto::ACTOR_KIND_RECV, "copy",
                                {"wire:" + at(reduce, owner)}, {at(reduce, owner)})
                      .OnDevice(owner)
                      .OnQueue(1));
    builder.Actor(TestActorSpec(at(add, owner), proto::ACTOR_KIND_BOXING, "add",
                                {at(reduce, owner), own(q, owner)}, {at(add, owner)})
                      .OnDevice(owner));
    builder.Actor(TestActorSpec("send:" + at(gather, other), proto::ACTOR_KIND_SEND, "copy",
                                {at(add, owner)}, {"wire:" + at(gather, other)})
                      .OnDevice(owner)
                      .OnQueue(1));
    if (range_views) {
      ranges["send:" + at(reduce, owner)] = {0, q};
      ranges[at(add, owner)] = {1, q};
    }
    builder.Actor(TestActorSpec("recv:" + at(gather, other), proto::ACTOR_KIND_RECV, "copy",
                                {"wire:" + at(gather, other)}, {at(gather, other)})
                      .OnDevice(other)
                      .OnQueue(1));
  }
  for (int m = 0; m < members; ++m) {
    std::vector<std::string> parts;
    for (int q = 0; q < chunks; ++q) {
      parts.push_back(q / sub_chunks == m ? at(chunk(q) + ".s1.add", m) : at(chunk(q) + ".g1", m));
    }
    builder.Actor(TestActorSpec(at("all_reduce", m), proto::ACTOR_KIND_BOXING, "flat_concat", parts,
                                {at("y", m)})
                      .OnDevice(m));
  }
  proto::Plan plan = builder.Build();
  for (proto::ActorDef& actor : *plan.mutable_actor()) {
    // The shapes the kernels read and write: their registers', or a chunk's range of x.
    for (int64_t id : actor.input_register()) {
      *actor.mutable_kernel()->add_input() = plan.register_def(static_cast<int>(id)).tensor();
    }
    auto range = ranges.find(actor.name());
    if (range != ranges.end()) {
      const auto [input, q] = range->second;
      proto::KernelDef* kernel = actor.mutable_kernel();
      kernel->mutable_input(input)->set_dims(0, sizes[q]);
      for (int k = 0; k < kernel->input_size(); ++k) {
        kernel->add_input_offset(k == input ? starts[q] * 4 : 0);
      }
    }
    for (int64_t id : actor.output_register()) {
      *actor.mutable_kernel()->add_output() = plan.register_def(static_cast<int>(id)).tensor();
    }
    if (actor.kernel().op_type() == "flat_split") SetInts(&actor, "sizes", sizes);
    if (actor.kernel().op_type() == "flat_concat") SetInts(&actor, "shape", {elements});
  }
  // What insert_send_recv does: a wire register lies on the receiving device (its recv's), and
  // the devices are nodes of their own. Registers are laid out again, device by device.
  plan.mutable_device(1)->set_node("node1");
  std::map<std::string, int64_t> recv_device;
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.kind() == proto::ACTOR_KIND_RECV) {
      recv_device[plan.register_def(static_cast<int>(actor.input_register(0))).name()] =
          actor.device();
    }
  }
  std::vector<int64_t> used(members, 0);
  for (proto::RegisterDef& r : *plan.mutable_register_def()) {
    if (recv_device.count(r.name())) r.set_device(recv_device[r.name()]);
    r.set_offset(used[r.device()]);
    used[r.device()] += r.slots() * r.bytes_per_slot();
  }
  for (int d = 0; d < members; ++d) {
    plan.mutable_device(d)->set_register_bytes(used[d]);
    plan.mutable_device(d)->set_planned_bytes(used[d]);
  }
  return plan;
}

}  // namespace bench
}  // namespace softwire
