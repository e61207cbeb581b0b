#include "plan/plan_invariants.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "plan/input_ranges.h"
#include "plan/labels.h"
#include "plan/ordering_inputs.h"
#include "plan/steps.h"

namespace softwire {
namespace plan {
namespace {

bool InRange(int64_t id, int size) {
  return id >= 0 && id < size;
}

Status Invalid(const std::string& who, const std::string& what) {
  return InvalidArgumentError(who + ": " + what);
}

Status CheckRegisterIds(const proto::Plan& plan) {
  for (int i = 0; i < plan.register_def_size(); ++i) {
    const proto::RegisterDef& r = plan.register_def(i);
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

// The actors' names seen so far, for the uniqueness check: an open-addressing table of actor
// indices with a tag of each name's hash, probed linearly; one allocation for millions of
// names, and a name compared only where the tags agree (a std::set of copies cost a second on
// a plan of 1.6 M actors).
class ActorNameSet {
 public:
  explicit ActorNameSet(const proto::Plan& plan) : plan_(plan) {
    size_t capacity = 16;
    while (capacity < 2 * static_cast<size_t>(plan.actor_size())) capacity *= 2;
    entries_.assign(capacity, Entry{});
    mask_ = capacity - 1;
  }

  // Adds actor `index`'s name; false when an actor added before has the same name.
  bool Insert(int index) {
    const std::string& name = plan_.actor(index).name();
    const size_t hash = std::hash<std::string_view>{}(name);
    const uint32_t tag = static_cast<uint32_t>(hash >> 32);
    for (size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
      Entry& entry = entries_[slot];
      if (entry.index < 0) {
        entry = Entry{tag, index};
        return true;
      }
      if (entry.tag == tag && plan_.actor(entry.index).name() == name) return false;
    }
  }

 private:
  struct Entry {
    uint32_t tag = 0;
    int32_t index = -1;
  };
  const proto::Plan& plan_;
  std::vector<Entry> entries_;
  size_t mask_ = 0;
};

Status CheckActorIds(const proto::Plan& plan) {
  ActorNameSet names(plan);
  for (int i = 0; i < plan.actor_size(); ++i) {
    const proto::ActorDef& a = plan.actor(i);
    if (a.id() != i) return Invalid(ActorLabel(a), "id must equal its index " + std::to_string(i));
    if (a.name().empty()) return Invalid(ActorLabel(a), "has no name");
    if (!names.Insert(i)) return Invalid(ActorLabel(a), "name is not unique");
    if (!InRange(a.device(), plan.device_size())) {
      return Invalid(ActorLabel(a), "device " + std::to_string(a.device()) + " does not exist");
    }
    for (int64_t r : a.input_register()) {
      if (!InRange(r, plan.register_def_size())) {
        return Invalid(ActorLabel(a), "input register " + std::to_string(r) + " does not exist");
      }
    }
    for (int64_t r : a.output_register()) {
      if (!InRange(r, plan.register_def_size())) {
        return Invalid(ActorLabel(a), "output register " + std::to_string(r) + " does not exist");
      }
    }
  }
  return Status::Ok();
}

// Every register's distinct readers, sorted, back to back: readers of register r are
// ids[begin[r] .. begin[r + 1]). Plans have millions of reads; a container per register would
// mean millions of allocations.
struct ReaderTable {
  std::vector<int64_t> begin;
  std::vector<int64_t> ids;
};

ReaderTable BuildReaderTable(const proto::Plan& plan) {
  const size_t registers = static_cast<size_t>(plan.register_def_size());
  ReaderTable table;
  table.begin.assign(registers + 1, 0);
  for (const proto::ActorDef& a : plan.actor()) {
    for (int64_t r : a.input_register()) ++table.begin[static_cast<size_t>(r) + 1];
  }
  for (size_t r = 0; r < registers; ++r) table.begin[r + 1] += table.begin[r];
  table.ids.resize(static_cast<size_t>(table.begin.back()));
  std::vector<int64_t> filled(table.begin.begin(), table.begin.end() - 1);
  for (const proto::ActorDef& a : plan.actor()) {
    for (int64_t r : a.input_register()) table.ids[filled[static_cast<size_t>(r)]++] = a.id();
  }
  // Sort and drop repeats (mul(x, x) reads x twice but is one consumer), compacting in place.
  int64_t out = 0;
  for (size_t r = 0; r < registers; ++r) {
    auto first = table.ids.begin() + table.begin[r];
    auto last = table.ids.begin() + table.begin[r + 1];
    std::sort(first, last);
    last = std::unique(first, last);
    table.begin[r] = out;
    out = std::copy(first, last, table.ids.begin() + out) - table.ids.begin();
  }
  table.begin[registers] = out;
  table.ids.resize(static_cast<size_t>(out));
  return table;
}

// The register's consumer list against its readers (both sorted, `listed` without repeats).
Status CompareConsumers(const proto::Plan& plan, const proto::RegisterDef& r,
                        const std::vector<int64_t>& listed, const int64_t* readers,
                        const int64_t* readers_end) {
  for (int64_t consumer : listed) {
    if (!std::binary_search(readers, readers_end, consumer)) {
      return Invalid(RegisterLabel(r), "lists consumer " + ActorLabel(plan.actor(consumer)) +
                                           ", which does not read it");
    }
  }
  for (const int64_t* reader = readers; reader != readers_end; ++reader) {
    if (!std::binary_search(listed.begin(), listed.end(), *reader)) {
      return Invalid(RegisterLabel(r), "is read by " + ActorLabel(plan.actor(*reader)) +
                                           ", which its consumer list lacks");
    }
  }
  return Status::Ok();
}

// Per actor: no register written twice, none read that it writes. Actors write a handful of
// registers, so a scan of its outputs beats any set.
Status CheckOwnRegisters(const proto::Plan& plan, const proto::ActorDef& a) {
  const auto& outputs = a.output_register();
  for (int i = 0; i < outputs.size(); ++i) {
    if (std::find(outputs.begin(), outputs.begin() + i, outputs[i]) != outputs.begin() + i) {
      return Invalid(ActorLabel(a),
                     "writes " + RegisterLabel(plan.register_def(outputs[i])) + " twice");
    }
  }
  for (int64_t r : a.input_register()) {
    if (std::find(outputs.begin(), outputs.end(), r) != outputs.end()) {
      return Invalid(ActorLabel(a),
                     "reads " + RegisterLabel(plan.register_def(r)) + ", which it writes itself");
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckPlanInvariants(const proto::Plan& plan) {
  SOFTWIRE_RETURN_IF_ERROR(CheckIds(plan));
  SOFTWIRE_RETURN_IF_ERROR(CheckProducersAndConsumers(plan));
  SOFTWIRE_RETURN_IF_ERROR(CheckPeriods(plan));
  SOFTWIRE_RETURN_IF_ERROR(CheckPhases(plan));
  SOFTWIRE_RETURN_IF_ERROR(CheckOrderingInputs(plan));
  SOFTWIRE_RETURN_IF_ERROR(CheckInputRanges(plan));
  return CheckArenaLayout(plan);
}

Status CheckIds(const proto::Plan& plan) {
  if (plan.schedule().steps() < 1 || plan.schedule().pieces_per_step() < 1) {
    return InvalidArgumentError(
        "schedule: steps (" + std::to_string(plan.schedule().steps()) + ") and pieces_per_step (" +
        std::to_string(plan.schedule().pieces_per_step()) + ") must be >= 1");
  }
  if (plan.schedule().steps() > kMaxSteps ||
      plan.schedule().pieces_per_step() > kMaxPiecesPerStep) {
    return InvalidArgumentError(
        "schedule: steps (" + std::to_string(plan.schedule().steps()) + ") and pieces_per_step (" +
        std::to_string(plan.schedule().pieces_per_step()) + ") must be at most " +
        std::to_string(kMaxSteps) + " and " + std::to_string(kMaxPiecesPerStep));
  }
  std::set<std::string> device_names;
  for (int i = 0; i < plan.device_size(); ++i) {
    if (plan.device(i).id() != i) {
      return InvalidArgumentError("device '" + DeviceName(plan.device(i)) +
                                  "': id must equal its index " + std::to_string(i));
    }
    // Two plan devices on one real device would get two arenas there, each within the budget.
    if (!device_names.insert(DeviceName(plan.device(i))).second) {
      return InvalidArgumentError(DeviceLabel(plan.device(i)) +
                                  ": another device of the plan has the same node and name");
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
      if (!InRange(part.register_id(), plan.register_def_size())) {
        return InvalidArgumentError("variable '" + variable.name() + "': part register " +
                                    std::to_string(part.register_id()) + " does not exist");
      }
    }
  }
  return Status::Ok();
}

Status CheckProducersAndConsumers(const proto::Plan& plan) {
  const size_t register_count = static_cast<size_t>(plan.register_def_size());
  std::vector<int> writer_count(register_count, 0);
  std::vector<int64_t> first_writer(register_count, -1);
  for (const proto::ActorDef& a : plan.actor()) {
    SOFTWIRE_RETURN_IF_ERROR(CheckOwnRegisters(plan, a));
    for (int64_t r : a.output_register()) {
      if (writer_count[static_cast<size_t>(r)]++ == 0)
        first_writer[static_cast<size_t>(r)] = a.id();
    }
  }
  const ReaderTable readers = BuildReaderTable(plan);
  std::vector<int64_t> listed;
  for (const proto::RegisterDef& r : plan.register_def()) {
    const size_t id = static_cast<size_t>(r.id());
    if (writer_count[id] != 1) {
      return Invalid(RegisterLabel(r),
                     "must have exactly one producer, has " + std::to_string(writer_count[id]));
    }
    if (first_writer[id] != r.producer()) {
      return Invalid(RegisterLabel(r), "names actor " + std::to_string(r.producer()) +
                                           " as producer, but " +
                                           ActorLabel(plan.actor(first_writer[id])) + " writes it");
    }
    listed.clear();
    for (const proto::RegisterConsumer& consumer : r.consumer()) listed.push_back(consumer.actor());
    std::sort(listed.begin(), listed.end());
    auto repeat = std::adjacent_find(listed.begin(), listed.end());
    if (repeat != listed.end()) {
      return Invalid(RegisterLabel(r),
                     "lists consumer " + ActorLabel(plan.actor(*repeat)) + " twice");
    }
    SOFTWIRE_RETURN_IF_ERROR(CompareConsumers(plan, r, listed,
                                              readers.ids.data() + readers.begin[id],
                                              readers.ids.data() + readers.begin[id + 1]));
  }
  return Status::Ok();
}

Status CheckPeriods(const proto::Plan& plan) {
  const int64_t total = TotalPieces(plan);
  const std::string total_text = std::to_string(total);
  // The registers' periods side by side: the actors' loop below looks each of its registers up,
  // and one dense array costs a cache miss where a RegisterDef costs two.
  std::vector<int64_t> register_periods;
  register_periods.reserve(static_cast<size_t>(plan.register_def_size()));
  for (const proto::RegisterDef& r : plan.register_def()) {
    if (r.period() < 1 || total % r.period() != 0) {
      return Invalid(RegisterLabel(r), "period " + std::to_string(r.period()) +
                                           " must be >= 1 and divide total_pieces " + total_text);
    }
    register_periods.push_back(r.period());
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
      if (register_periods[static_cast<size_t>(id)] % a.period() == 0) return Status::Ok();
      const proto::RegisterDef& r = plan.register_def(static_cast<int>(id));
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
  for (const proto::RegisterDef& r : plan.register_def()) {
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

}  // namespace plan
}  // namespace softwire
