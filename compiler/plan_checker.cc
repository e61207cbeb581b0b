#include "compiler/plan_checker.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/tensor_type.h"

namespace softwire {
namespace compiler {
namespace {

Status Fail(const std::string& message) {
  return FailedPreconditionError("plan breaks an invariant: " + message);
}

std::string ActorLabel(const proto::ActorDef& actor) {
  return "actor '" + actor.name() + "'";
}
std::string RegisterLabel(const proto::RegisterDef& reg) {
  return "register '" + reg.name() + "'";
}

Status CheckIds(const proto::Plan& plan) {
  for (int i = 0; i < plan.device_size(); ++i) {
    if (plan.device(i).id() != i) return Fail("device " + std::to_string(i) + " has another id");
  }
  for (int i = 0; i < plan.register__size(); ++i) {
    const proto::RegisterDef& reg = plan.register_(i);
    if (reg.id() != i) return Fail(RegisterLabel(reg) + " id differs from its index");
    if (reg.producer() < 0 || reg.producer() >= plan.actor_size()) {
      return Fail(RegisterLabel(reg) + " names a producer that does not exist");
    }
    if (reg.device() < 0 || reg.device() >= plan.device_size()) {
      return Fail(RegisterLabel(reg) + " names a device that does not exist");
    }
    for (const proto::RegisterConsumer& consumer : reg.consumer()) {
      if (consumer.actor() < 0 || consumer.actor() >= plan.actor_size()) {
        return Fail(RegisterLabel(reg) + " names a consumer that does not exist");
      }
    }
  }
  for (int i = 0; i < plan.actor_size(); ++i) {
    const proto::ActorDef& actor = plan.actor(i);
    if (actor.id() != i) return Fail(ActorLabel(actor) + " id differs from its index");
    if (actor.device() < 0 || actor.device() >= plan.device_size()) {
      return Fail(ActorLabel(actor) + " names a device that does not exist");
    }
    for (int64_t id : actor.input_register()) {
      if (id < 0 || id >= plan.register__size()) return Fail(ActorLabel(actor) + " input id");
    }
    for (int64_t id : actor.output_register()) {
      if (id < 0 || id >= plan.register__size()) return Fail(ActorLabel(actor) + " output id");
    }
  }
  return Status::Ok();
}

Status CheckProducersAndConsumers(const proto::Plan& plan) {
  const size_t registers = static_cast<size_t>(plan.register__size());
  std::vector<int> producers(registers, 0);
  // Every register's readers, sorted, back to back (begin[r] .. begin[r + 1]): plans have
  // millions of reads, and a vector per register would mean millions of allocations.
  std::vector<int64_t> begin(registers + 1, 0);
  for (const proto::ActorDef& actor : plan.actor()) {
    for (int64_t id : actor.output_register()) {
      ++producers[id];
      if (plan.register_(id).producer() != actor.id()) {
        return Fail(ActorLabel(actor) + " writes " + RegisterLabel(plan.register_(id)) +
                    " whose producer is another actor");
      }
    }
    for (int64_t id : actor.input_register()) ++begin[id + 1];
  }
  for (size_t r = 0; r < registers; ++r) begin[r + 1] += begin[r];
  std::vector<int64_t> readers(begin.back());
  std::vector<int64_t> filled(begin.begin(), begin.end() - 1);
  for (const proto::ActorDef& actor : plan.actor()) {
    for (int64_t id : actor.input_register()) readers[filled[id]++] = actor.id();
  }
  for (size_t r = 0; r < registers; ++r) {
    std::sort(readers.begin() + begin[r], readers.begin() + begin[r + 1]);
  }
  std::vector<int64_t> consumers;
  for (const proto::RegisterDef& reg : plan.register_()) {
    if (producers[reg.id()] != 1) return Fail(RegisterLabel(reg) + " has not exactly 1 producer");
    consumers.clear();
    int phase_one = 0;
    for (const proto::RegisterConsumer& consumer : reg.consumer()) {
      consumers.push_back(consumer.actor());
      if (consumer.phase() != 0 && consumer.phase() != 1) {
        return Fail(RegisterLabel(reg) + " has a consumer in phase " +
                    std::to_string(consumer.phase()));
      }
      phase_one += consumer.phase();
    }
    std::sort(consumers.begin(), consumers.end());
    if (!std::equal(consumers.begin(), consumers.end(), readers.begin() + begin[reg.id()],
                    readers.begin() + begin[reg.id() + 1])) {
      return Fail(RegisterLabel(reg) + " consumer list differs from the actors that read it");
    }
    if (phase_one > 1) return Fail(RegisterLabel(reg) + " has more than one phase-1 consumer");
    if (phase_one == 1 && reg.slots() != 1) {
      return Fail(RegisterLabel(reg) + " has a phase-1 consumer but " +
                  std::to_string(reg.slots()) + " slots");
    }
  }
  return Status::Ok();
}

Status CheckPeriods(const proto::Plan& plan) {
  const int64_t total = plan.schedule().steps() * plan.schedule().pieces_per_step();
  if (plan.schedule().steps() < 1 || plan.schedule().pieces_per_step() < 1) {
    return Fail("schedule needs steps >= 1 and pieces_per_step >= 1");
  }
  for (const proto::RegisterDef& reg : plan.register_()) {
    if (reg.period() < 1 || total % reg.period() != 0) {
      return Fail(RegisterLabel(reg) + " period does not divide total pieces");
    }
  }
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.period() < 1 || total % actor.period() != 0) {
      return Fail(ActorLabel(actor) + " period does not divide total pieces");
    }
    if (actor.firings() != total / actor.period()) {
      return Fail(ActorLabel(actor) + " firings " + std::to_string(actor.firings()) +
                  " differ from total pieces / period");
    }
    auto divides = [&](int64_t id) { return plan.register_(id).period() % actor.period() == 0; };
    for (int64_t id : actor.input_register()) {
      if (!divides(id)) return Fail(ActorLabel(actor) + " period does not divide its input's");
    }
    for (int64_t id : actor.output_register()) {
      if (!divides(id)) return Fail(ActorLabel(actor) + " period does not divide its output's");
    }
  }
  return Status::Ok();
}

// A region of a device arena: a register's slots, or an actor's workspace or state. Labels are
// built only for a message.
struct Region {
  enum class Kind { kRegister, kWorkspace, kState };
  int64_t begin;
  int64_t end;
  Kind kind;
  int64_t id;  // Register or actor.
};

std::string RegionLabel(const proto::Plan& plan, const Region& region) {
  switch (region.kind) {
    case Region::Kind::kRegister:
      return RegisterLabel(plan.register_(static_cast<int>(region.id)));
    case Region::Kind::kWorkspace:
      return "workspace of " + ActorLabel(plan.actor(static_cast<int>(region.id)));
    case Region::Kind::kState:
    default:
      return "state of " + ActorLabel(plan.actor(static_cast<int>(region.id)));
  }
}

Status CheckMemory(const proto::Plan& plan) {
  std::vector<std::vector<Region>> regions(plan.device_size());
  for (const proto::RegisterDef& reg : plan.register_()) {
    if (reg.slots() < 1) return Fail(RegisterLabel(reg) + " has fewer than 1 slot");
    if (reg.bytes_per_slot() < FromTensorDesc(reg.tensor()).NumBytes()) {
      return Fail(RegisterLabel(reg) + " bytes_per_slot is below the tensor's bytes");
    }
    regions[reg.device()].push_back({reg.offset(), reg.offset() + reg.slots() * reg.bytes_per_slot(),
                                     Region::Kind::kRegister, reg.id()});
  }
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.workspace_bytes() > 0) {
      regions[actor.device()].push_back({actor.workspace_offset(),
                                         actor.workspace_offset() + actor.workspace_bytes(),
                                         Region::Kind::kWorkspace, actor.id()});
    }
    if (actor.state_bytes() > 0) {
      regions[actor.device()].push_back({actor.state_offset(),
                                         actor.state_offset() + actor.state_bytes(),
                                         Region::Kind::kState, actor.id()});
    }
  }
  for (int device = 0; device < plan.device_size(); ++device) {
    std::vector<Region>& list = regions[device];
    std::sort(list.begin(), list.end(),
              [](const Region& a, const Region& b) { return a.begin < b.begin; });
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].begin < 0) return Fail(RegionLabel(plan, list[i]) + " has a negative offset");
      if (i > 0 && list[i].begin < list[i - 1].end) {
        return Fail(RegionLabel(plan, list[i]) + " overlaps " + RegionLabel(plan, list[i - 1]));
      }
      if (list[i].end > plan.device(device).planned_bytes()) {
        return Fail(RegionLabel(plan, list[i]) + " ends beyond the device's planned bytes");
      }
    }
  }
  return Status::Ok();
}

Status CheckKindSettings(const proto::Plan& plan) {
  for (const proto::ActorDef& actor : plan.actor()) {
    switch (actor.kind()) {
      case proto::ACTOR_KIND_SOURCE:
        if (!actor.has_source()) return Fail(ActorLabel(actor) + " is a source without settings");
        break;
      case proto::ACTOR_KIND_VARIABLE:
        if (!actor.has_variable() || actor.output_register_size() != 1 ||
            plan.register_(actor.output_register(0)).slots() != 1) {
          return Fail(ActorLabel(actor) + " must have settings and one 1-slot output");
        }
        break;
      case proto::ACTOR_KIND_UPDATE:
        if (!actor.has_update() || actor.input_register_size() != 2) {
          return Fail(ActorLabel(actor) + " must have settings and two inputs");
        }
        break;
      case proto::ACTOR_KIND_SINK:
        if (!actor.has_sink()) return Fail(ActorLabel(actor) + " is a sink without settings");
        break;
      case proto::ACTOR_KIND_UNSPECIFIED:
        return Fail(ActorLabel(actor) + " has no kind");
      default:
        break;
    }
  }
  for (const proto::PlanOutput& output : plan.output()) {
    if (output.sink_actor() < 0 || output.sink_actor() >= plan.actor_size() ||
        plan.actor(output.sink_actor()).kind() != proto::ACTOR_KIND_SINK) {
      return Fail("output '" + output.name() + "' does not name a sink actor");
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckPlanInvariants(const proto::Plan& plan) {
  SOFTWIRE_RETURN_IF_ERROR(CheckIds(plan));
  SOFTWIRE_RETURN_IF_ERROR(CheckProducersAndConsumers(plan));
  SOFTWIRE_RETURN_IF_ERROR(CheckPeriods(plan));
  SOFTWIRE_RETURN_IF_ERROR(CheckMemory(plan));
  return CheckKindSettings(plan);
}

}  // namespace compiler
}  // namespace softwire
