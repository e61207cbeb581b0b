#include "plan/ordering_inputs.h"

#include <algorithm>
#include <string>
#include <vector>

#include "plan/labels.h"

namespace softwire {
namespace plan {
namespace {

int PhaseOf(const proto::RegisterDef& r, int64_t actor) {
  for (const proto::RegisterConsumer& consumer : r.consumer()) {
    if (consumer.actor() == actor) return consumer.phase();
  }
  return 0;
}

// The actors left when Kahn's algorithm removes every actor no cycle reaches: non-empty
// exactly when the actor graph has a cycle.
std::vector<bool> ActorsOnOrBehindCycles(const proto::Plan& plan) {
  const size_t actors = static_cast<size_t>(plan.actor_size());
  std::vector<int64_t> waiting(actors, 0);  // Inputs not yet removed, one per reader listing.
  for (const proto::RegisterDef& r : plan.register_def()) {
    for (const proto::RegisterConsumer& consumer : r.consumer()) {
      ++waiting[static_cast<size_t>(consumer.actor())];
    }
  }
  // A queue in one vector: every actor enters it at most once.
  std::vector<int64_t> ready;
  ready.reserve(actors);
  for (size_t a = 0; a < actors; ++a) {
    if (waiting[a] == 0) ready.push_back(static_cast<int64_t>(a));
  }
  std::vector<bool> left(actors, true);
  for (size_t next = 0; next < ready.size(); ++next) {
    const int64_t a = ready[next];
    left[static_cast<size_t>(a)] = false;
    for (int64_t output : plan.actor(static_cast<int>(a)).output_register()) {
      for (const proto::RegisterConsumer& consumer :
           plan.register_def(static_cast<int>(output)).consumer()) {
        if (--waiting[static_cast<size_t>(consumer.actor())] == 0) {
          ready.push_back(consumer.actor());
        }
      }
    }
  }
  return left;
}

}  // namespace

int KernelInputCount(const proto::ActorDef& actor) {
  const int inputs = actor.input_register_size();
  const int described = actor.kernel().input_size();
  return described == 0 ? inputs : std::min(described, inputs);
}

int OrderingInputCount(const proto::ActorDef& actor) {
  return actor.input_register_size() - KernelInputCount(actor);
}

bool IsOrderingInput(const proto::ActorDef& actor, int index) {
  return index >= KernelInputCount(actor) && index < actor.input_register_size();
}

Status CheckOrderingInputs(const proto::Plan& plan) {
  bool any = false;
  for (const proto::ActorDef& a : plan.actor()) {
    if (a.kernel().input_size() > a.input_register_size()) {
      return InvalidArgumentError(
          ActorLabel(a) + ": its kernel describes " + std::to_string(a.kernel().input_size()) +
          " inputs, but it reads " + std::to_string(a.input_register_size()) + " registers");
    }
    if (OrderingInputCount(a) == 0) continue;
    any = true;
    if (a.kind() != proto::ACTOR_KIND_COMPUTE) {
      return InvalidArgumentError(ActorLabel(a) + ": a " + ActorKindName(a.kind()) + " actor has " +
                                  std::to_string(OrderingInputCount(a)) +
                                  " ordering inputs (more input registers than its kernel "
                                  "describes); only compute actors may");
    }
    for (int k = KernelInputCount(a); k < a.input_register_size(); ++k) {
      const proto::RegisterDef& r = plan.register_def(static_cast<int>(a.input_register(k)));
      if (PhaseOf(r, a.id()) != 0) {
        return InvalidArgumentError(ActorLabel(a) + ": ordering input " + RegisterLabel(r) +
                                    " is read in phase 1; ordering inputs are read in phase 0");
      }
      if (r.device() != a.device()) {
        return InvalidArgumentError(ActorLabel(a) + ": ordering input " + RegisterLabel(r) +
                                    " lies on device " + std::to_string(r.device()) +
                                    ", not on the actor's device " + std::to_string(a.device()));
      }
    }
  }
  if (!any) return Status::Ok();
  const std::vector<bool> left = ActorsOnOrBehindCycles(plan);
  if (std::find(left.begin(), left.end(), true) == left.end()) return Status::Ok();
  // Name an ordering edge whose both ends are left: both lie on or behind a cycle. Prefer an
  // edge whose reader reaches its producer (the edge closes the cycle).
  for (const proto::ActorDef& a : plan.actor()) {
    if (!left[static_cast<size_t>(a.id())]) continue;
    for (int k = KernelInputCount(a); k < a.input_register_size(); ++k) {
      const proto::RegisterDef& r = plan.register_def(static_cast<int>(a.input_register(k)));
      if (!left[static_cast<size_t>(r.producer())]) continue;
      return InvalidArgumentError(
          ActorLabel(a) + ": ordering input " + RegisterLabel(r) + " makes a cycle: its producer " +
          ActorLabel(plan.actor(static_cast<int>(r.producer()))) +
          " waits, through other registers, for this actor's outputs (the plan would deadlock)");
    }
  }
  return InvalidArgumentError(
      "the actor graph has a cycle (the plan would deadlock), though no ordering input lies on "
      "it");
}

}  // namespace plan
}  // namespace softwire
