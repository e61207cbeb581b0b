#include "plan/memory_breakdown.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <utility>

#include "base/format_bytes.h"
#include "plan/register_lifetimes.h"

namespace softwire {
namespace plan {
namespace {

bool IsTransfer(proto::ActorKind kind) {
  return kind == proto::ACTOR_KIND_COPY || kind == proto::ACTOR_KIND_SEND ||
         kind == proto::ACTOR_KIND_RECV || kind == proto::ACTOR_KIND_BOXING;
}

bool AppliesOptimizer(const proto::ActorDef& actor) {
  return actor.kind() == proto::ACTOR_KIND_UPDATE && actor.update().has_optimizer();
}

const proto::ActorDef& Producer(const proto::Plan& plan, int64_t register_id) {
  return plan.actor(static_cast<int>(plan.register_def(static_cast<int>(register_id)).producer()));
}

// The actors whose outputs the SINK actors read, directly or through other actors.
std::vector<bool> ForwardActors(const proto::Plan& plan) {
  std::vector<bool> forward(static_cast<size_t>(plan.actor_size()), false);
  std::vector<int64_t> work;
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.kind() == proto::ACTOR_KIND_SINK) work.push_back(actor.id());
  }
  while (!work.empty()) {
    const proto::ActorDef& actor = plan.actor(static_cast<int>(work.back()));
    work.pop_back();
    for (int64_t input : actor.input_register()) {
      const int64_t producer = plan.register_def(static_cast<int>(input)).producer();
      if (forward[static_cast<size_t>(producer)]) continue;
      forward[static_cast<size_t>(producer)] = true;
      work.push_back(producer);
    }
  }
  return forward;
}

// Gradient registers: see the header.
std::vector<bool> GradientRegisters(const proto::Plan& plan) {
  std::vector<bool> gradient(static_cast<size_t>(plan.register_def_size()), false);
  std::vector<int64_t> work;
  auto mark = [&](int64_t id) {
    if (gradient[static_cast<size_t>(id)]) return;
    gradient[static_cast<size_t>(id)] = true;
    work.push_back(id);
  };
  for (const proto::ActorDef& actor : plan.actor()) {
    if (!AppliesOptimizer(actor)) continue;
    for (int64_t input : actor.input_register()) {
      if (Producer(plan, input).kind() != proto::ACTOR_KIND_VARIABLE) mark(input);
    }
  }
  while (!work.empty()) {
    const proto::ActorDef& producer = Producer(plan, work.back());
    work.pop_back();
    const std::string& op = producer.kernel().op_type();
    const bool passes_gradients =
        producer.kind() == proto::ACTOR_KIND_ACCUMULATE || IsTransfer(producer.kind()) ||
        (producer.kind() == proto::ACTOR_KIND_COMPUTE && (op == "cast" || op == "add_n"));
    if (!passes_gradients) continue;
    for (int64_t input : producer.input_register()) mark(input);
  }
  return gradient;
}

int64_t RegionBytes(const proto::RegisterDef& reg) {
  return reg.slots() * reg.bytes_per_slot();
}

// Bytes of the union of `intervals` ([begin, end) pairs).
int64_t UnionBytes(std::vector<std::pair<int64_t, int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  int64_t bytes = 0;
  int64_t covered_to = 0;
  for (const auto& [begin, end] : intervals) {
    const int64_t from = std::max(begin, covered_to);
    if (end > from) bytes += end - from;
    covered_to = std::max(covered_to, end);
  }
  return bytes;
}

// True when `output` is laid out exactly over an input of its producer that the producer may
// write over (an in-place pair, docs/PROTOCOL.md "In-place ops").
bool WrittenInPlace(const proto::Plan& plan, const proto::RegisterDef& output) {
  const proto::ActorDef& writer = Producer(plan, output.id());
  for (int64_t input_id : writer.input_register()) {
    const proto::RegisterDef& input = plan.register_def(static_cast<int>(input_id));
    if (input.device() == output.device() && input.offset() == output.offset() &&
        input.slots() == output.slots() && input.bytes_per_slot() == output.bytes_per_slot() &&
        KernelMayWriteOver(plan, writer, input_id)) {
      return true;
    }
  }
  return false;
}

}  // namespace

const char* RegisterRoleName(RegisterRole role) {
  switch (role) {
    case RegisterRole::kWeights:
      return "weights";
    case RegisterRole::kTransfer:
      return "transfer";
    case RegisterRole::kGradients:
      return "gradients";
    case RegisterRole::kKeptActivations:
      return "kept activations";
    case RegisterRole::kTransient:
      return "transient";
  }
  return "?";
}

std::vector<RegisterRole> RegisterRoles(const proto::Plan& plan) {
  const std::vector<bool> forward = ForwardActors(plan);
  const std::vector<bool> gradient = GradientRegisters(plan);
  std::vector<RegisterRole> roles(static_cast<size_t>(plan.register_def_size()),
                                  RegisterRole::kTransient);
  // Register ids are topologically unordered; weights through casts need their input first.
  std::vector<bool> weights(roles.size(), false);
  std::vector<bool> decided(roles.size(), false);
  std::function<bool(int64_t)> is_weights = [&](int64_t id) -> bool {
    const size_t index = static_cast<size_t>(id);
    if (decided[index]) return weights[index];
    decided[index] = true;
    const proto::ActorDef& producer = Producer(plan, id);
    if (producer.kind() == proto::ACTOR_KIND_VARIABLE) {
      weights[index] = true;
    } else if (producer.kind() == proto::ACTOR_KIND_COMPUTE &&
               producer.kernel().op_type() == "cast" && producer.input_register_size() == 1) {
      weights[index] = is_weights(producer.input_register(0));
    }
    return weights[index];
  };
  for (const proto::RegisterDef& reg : plan.register_def()) {
    const size_t index = static_cast<size_t>(reg.id());
    const proto::ActorDef& producer = Producer(plan, reg.id());
    if (is_weights(reg.id())) {
      roles[index] = RegisterRole::kWeights;
    } else if (IsTransfer(producer.kind())) {
      roles[index] = RegisterRole::kTransfer;
    } else if (gradient[index]) {
      roles[index] = RegisterRole::kGradients;
    } else if (forward[static_cast<size_t>(producer.id())]) {
      bool read_outside = false;
      for (const proto::RegisterConsumer& consumer : reg.consumer()) {
        const proto::ActorDef& reader = plan.actor(static_cast<int>(consumer.actor()));
        read_outside = read_outside || (!forward[static_cast<size_t>(reader.id())] &&
                                        reader.kind() != proto::ACTOR_KIND_SINK);
      }
      if (read_outside) roles[index] = RegisterRole::kKeptActivations;
    }
  }
  return roles;
}

MemoryBreakdown BreakDownMemory(const proto::Plan& plan, int device_id) {
  MemoryBreakdown breakdown;
  if (device_id < 0 || device_id >= plan.device_size()) return breakdown;
  const proto::PlanDevice& device = plan.device(device_id);
  const std::vector<RegisterRole> roles = RegisterRoles(plan);
  // The order of the header: a shared byte counts for the first of these.
  constexpr RegisterRole kOrder[] = {RegisterRole::kWeights, RegisterRole::kTransfer,
                                     RegisterRole::kGradients, RegisterRole::kKeptActivations,
                                     RegisterRole::kTransient};
  int64_t* shares[] = {&breakdown.weights, &breakdown.transfer, &breakdown.gradients,
                       &breakdown.kept_activations, &breakdown.transient};
  int64_t* unshared[] = {&breakdown.unshared_weights, &breakdown.unshared_transfer,
                         &breakdown.unshared_gradients, &breakdown.unshared_kept_activations,
                         &breakdown.unshared_transient};
  std::vector<std::pair<int64_t, int64_t>> covered;
  int64_t covered_bytes = 0;
  for (size_t k = 0; k < std::size(kOrder); ++k) {
    for (const proto::RegisterDef& reg : plan.register_def()) {
      if (reg.device() != device_id || roles[static_cast<size_t>(reg.id())] != kOrder[k]) continue;
      covered.emplace_back(reg.offset(), reg.offset() + RegionBytes(reg));
      *unshared[k] += RegionBytes(reg);
    }
    const int64_t now = UnionBytes(covered);
    *shares[k] = now - covered_bytes;
    covered_bytes = now;
  }
  breakdown.padding = device.register_bytes() - covered_bytes;
  breakdown.workspaces = device.workspace_bytes();
  for (const proto::ActorDef& actor : plan.actor()) {
    if (actor.device() != device_id) continue;
    (AppliesOptimizer(actor) ? breakdown.optimizer_state : breakdown.other_state) +=
        actor.state_bytes();
  }
  // The rest of planned_bytes is alignment: between state regions, and after the registers.
  breakdown.padding += device.planned_bytes() - device.register_bytes() - device.workspace_bytes() -
                       breakdown.optimizer_state - breakdown.other_state;

  for (const proto::RegisterDef& reg : plan.register_def()) {
    if (reg.device() == device_id && WrittenInPlace(plan, reg)) {
      breakdown.saved_by_in_place += RegionBytes(reg);
    }
  }
  const int64_t sharing = RegisterBytesWithoutSharing(plan, device_id) - device.register_bytes();
  breakdown.saved_by_in_place =
      std::min(breakdown.saved_by_in_place, std::max<int64_t>(sharing, 0));
  breakdown.saved_by_reuse = std::max<int64_t>(sharing - breakdown.saved_by_in_place, 0);
  breakdown.saved_by_views = device.view_bytes();
  return breakdown;
}

std::string DescribeMemoryBreakdown(const MemoryBreakdown& b) {
  std::string text = "weights " + FormatBytes(b.weights) + ", gradients " +
                     FormatBytes(b.gradients) + ", optimizer state " +
                     FormatBytes(b.optimizer_state) + ", kept activations " +
                     FormatBytes(b.kept_activations) + ", transient " + FormatBytes(b.transient) +
                     ", transfer " + FormatBytes(b.transfer);
  if (b.workspaces != 0) text += ", workspaces " + FormatBytes(b.workspaces);
  if (b.other_state != 0) text += ", other state " + FormatBytes(b.other_state);
  if (b.padding != 0) text += ", padding " + FormatBytes(b.padding);
  return text + "; saved: views " + FormatBytes(b.saved_by_views) + ", reuse " +
         FormatBytes(b.saved_by_reuse) + ", in place " + FormatBytes(b.saved_by_in_place);
}

}  // namespace plan
}  // namespace softwire
