#include "actors/plan_invariants.h"

#include <algorithm>
#include <set>
#include <vector>

namespace softwire {
namespace actors {

std::string ActorLabel(const proto::ActorDef& actor) {
  return "actor '" + actor.name() + "' (" + std::to_string(actor.id()) + ")";
}

std::string RegisterLabel(const proto::RegisterDef& register_def) {
  return "register '" + register_def.name() + "' (" + std::to_string(register_def.id()) + ")";
}

int64_t TotalPieces(const proto::Plan& plan) {
  return plan.schedule().steps() * plan.schedule().pieces_per_step();
}

namespace {

bool InRange(int64_t id, int size) {
  return id >= 0 && id < size;
}

Status Invalid(const std::string& who, const std::string& what) {
  return InvalidArgumentError(who + ": " + what);
}

Status CheckRegisterIds(const proto::Plan& plan) {
  for (int i = 0; i < plan.register__size(); ++i) {
    const proto::RegisterDef& r = plan.register_(i);
    if (r.id() != i) {
      return Invalid(RegisterLabel(r), "id must equal its index " + std::to_string(i));
    }
    if (!InRange(r.device(), plan.device_size())) {
      return Invalid(RegisterLabel(r), "device " + std::to_string(r.device()) + " does not exist");
    }
    if (!InRange(r.producer(), plan.actor_size())) {
      return Invalid(RegisterLabel(r),
                     "producer actor " + std::to_string(r.producer()) + " does not exist");
    }
    for (const proto::RegisterConsumer& consumer : r.consumer()) {
      if (!InRange(consumer.actor(), plan.actor_size())) {
        return Invalid(RegisterLabel(r),
                       "consumer actor " + std::to_string(consumer.actor()) + " does not exist");
      }
    }
  }
  return Status::Ok();
}

Status CheckActorIds(const proto::Plan& plan) {
  std::set<std::string> names;
  for (int i = 0; i < plan.actor_size(); ++i) {
    const proto::ActorDef& a = plan.actor(i);
    if (a.id() != i) return Invalid(ActorLabel(a), "id must equal its index " + std::to_string(i));
    if (a.name().empty()) return Invalid(ActorLabel(a), "has no name");
    if (!names.insert(a.name()).second) return Invalid(ActorLabel(a), "name is not unique");
    if (!InRange(a.device(), plan.device_size())) {
      return Invalid(ActorLabel(a), "device " + std::to_string(a.device()) + " does not exist");
    }
    for (int64_t r : a.input_register()) {
      if (!InRange(r, plan.register__size())) {
        return Invalid(ActorLabel(a), "input register " + std::to_string(r) + " does not exist");
      }
    }
    for (int64_t r : a.output_register()) {
      if (!InRange(r, plan.register__size())) {
        return Invalid(ActorLabel(a), "output register " + std::to_string(r) + " does not exist");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckIds(const proto::Plan& plan) {
  if (plan.schedule().steps() < 1 || plan.schedule().pieces_per_step() < 1) {
    return InvalidArgumentError(
        "schedule: steps (" + std::to_string(plan.schedule().steps()) + ") and pieces_per_step (" +
        std::to_string(plan.schedule().pieces_per_step()) + ") must be >= 1");
  }
  for (int i = 0; i < plan.device_size(); ++i) {
    if (plan.device(i).id() != i) {
      return InvalidArgumentError("device '" + plan.device(i).node() + "/" + plan.device(i).name() +
                                  "': id must equal its index " + std::to_string(i));
    }
  }
  SOFTWIRE_RETURN_IF_ERROR(CheckRegisterIds(plan));
  SOFTWIRE_RETURN_IF_ERROR(CheckActorIds(plan));
  for (const proto::PlanOutput& output : plan.output()) {
    if (!InRange(output.sink_actor(), plan.actor_size())) {
      return InvalidArgumentError("output '" + output.name() + "': sink actor " +
                                  std::to_string(output.sink_actor()) + " does not exist");
    }
  }
  for (const proto::PlanVariable& variable : plan.variable()) {
    for (const proto::VariablePart& part : variable.part()) {
      if (!InRange(part.register_(), plan.register__size())) {
        return InvalidArgumentError("variable '" + variable.name() + "': part register " +
                                    std::to_string(part.register_()) + " does not exist");
      }
    }
  }
  return Status::Ok();
}

Status CheckProducersAndConsumers(const proto::Plan& plan) {
  const int register_count = plan.register__size();
  std::vector<std::vector<int64_t>> writers(register_count);
  std::vector<std::set<int64_t>> readers(register_count);
  for (const proto::ActorDef& a : plan.actor()) {
    std::set<int64_t> written;
    for (int64_t r : a.output_register()) {
      if (!written.insert(r).second) {
        return Invalid(ActorLabel(a), "writes " + RegisterLabel(plan.register_(r)) + " twice");
      }
      writers[r].push_back(a.id());
    }
    for (int64_t r : a.input_register()) {
      if (written.count(r)) {
        return Invalid(ActorLabel(a),
                       "reads " + RegisterLabel(plan.register_(r)) + ", which it writes itself");
      }
      readers[r].insert(a.id());
    }
  }
  for (const proto::RegisterDef& r : plan.register_()) {
    const std::vector<int64_t>& producers = writers[r.id()];
    if (producers.size() != 1) {
      return Invalid(RegisterLabel(r),
                     "must have exactly one producer, has " + std::to_string(producers.size()));
    }
    if (producers[0] != r.producer()) {
      return Invalid(RegisterLabel(r), "names actor " + std::to_string(r.producer()) +
                                           " as producer, but " +
                                           ActorLabel(plan.actor(producers[0])) + " writes it");
    }
    std::set<int64_t> listed;
    for (const proto::RegisterConsumer& consumer : r.consumer()) {
      if (!listed.insert(consumer.actor()).second) {
        return Invalid(RegisterLabel(r),
                       "lists consumer " + ActorLabel(plan.actor(consumer.actor())) + " twice");
      }
      if (!readers[r.id()].count(consumer.actor())) {
        return Invalid(RegisterLabel(r), "lists consumer " +
                                             ActorLabel(plan.actor(consumer.actor())) +
                                             ", which does not read it");
      }
    }
    for (int64_t reader : readers[r.id()]) {
      if (!listed.count(reader)) {
        return Invalid(RegisterLabel(r), "is read by " + ActorLabel(plan.actor(reader)) +
                                             ", which its consumer list lacks");
      }
    }
  }
  return Status::Ok();
}

Status CheckPeriods(const proto::Plan& plan) {
  const int64_t total = TotalPieces(plan);
  const std::string total_text = std::to_string(total);
  for (const proto::RegisterDef& r : plan.register_()) {
    if (r.period() < 1 || total % r.period() != 0) {
      return Invalid(RegisterLabel(r), "period " + std::to_string(r.period()) +
                                           " must be >= 1 and divide total_pieces " + total_text);
    }
  }
  for (const proto::ActorDef& a : plan.actor()) {
    if (a.period() < 1 || total % a.period() != 0) {
      return Invalid(ActorLabel(a), "period " + std::to_string(a.period()) +
                                        " must be >= 1 and divide total_pieces " + total_text);
    }
    if (a.firings() != total / a.period()) {
      return Invalid(ActorLabel(a),
                     "firings is " + std::to_string(a.firings()) +
                         ", must be total_pieces / period = " + std::to_string(total / a.period()));
    }
    auto check_register = [&](int64_t id, const char* verb) {
      const proto::RegisterDef& r = plan.register_(id);
      if (r.period() % a.period() == 0) return Status::Ok();
      return Invalid(ActorLabel(a), std::string(verb) + " " + RegisterLabel(r) + " with period " +
                                        std::to_string(r.period()) + ", which its period " +
                                        std::to_string(a.period()) + " does not divide");
    };
    for (int64_t r : a.input_register()) SOFTWIRE_RETURN_IF_ERROR(check_register(r, "reads"));
    for (int64_t r : a.output_register()) SOFTWIRE_RETURN_IF_ERROR(check_register(r, "writes"));
  }
  return Status::Ok();
}

Status CheckPhases(const proto::Plan& plan) {
  for (const proto::RegisterDef& r : plan.register_()) {
    int writers = 0;
    for (const proto::RegisterConsumer& consumer : r.consumer()) {
      if (consumer.phase() != 0 && consumer.phase() != 1) {
        return Invalid(RegisterLabel(r), "consumer " + ActorLabel(plan.actor(consumer.actor())) +
                                             " has phase " + std::to_string(consumer.phase()) +
                                             "; phases are 0 or 1");
      }
      writers += consumer.phase();
    }
    if (writers > 1) {
      return Invalid(RegisterLabel(r), "has " + std::to_string(writers) +
                                           " phase-1 consumers; at most one is allowed");
    }
    if (writers == 1 && r.slots() != 1) {
      return Invalid(RegisterLabel(r), "has a phase-1 consumer and " + std::to_string(r.slots()) +
                                           " slots; an in-place writer needs exactly one slot");
    }
  }
  return Status::Ok();
}

}  // namespace actors
}  // namespace softwire
