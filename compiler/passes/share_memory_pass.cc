// share_memory: registers that can never be live at the same time share bytes of their device's
// arena (lifetime-based reuse, docs/PROTOCOL.md "Memory").
//
// Runs on the emitted plan, after the deadlock check, and adds no dependency: it only lays out
// again what plan_memory laid out side by side. Lives come from the plan's dependencies and
// slots, for every firing order the protocol allows (plan/register_lifetimes.h), never from one
// observed order. Per device, a greedy first-fit places each register at the lowest offset that
// overlaps no register it may be live with; as OneFlow does, it tries several orders (plan order,
// largest first, earliest first write first) and keeps the smallest arena. Every pair whose
// slots overlap lists each other in shares_bytes_with, which the plan checker proves again.
// Workspaces and actor state move down behind the registers; nothing grows.
//
// In-place ops (docs/PROTOCOL.md, "In-place ops"): before packing, each element-wise compute
// actor that is its input's last reader under every firing order (RegisterLifetimes::
// WritesInPlace) gets its output laid out exactly over that input, and the pair packs as one
// region (`in_place = false`, `--no-in-place`: off).
#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "compiler/passes/passes.h"
#include "plan/register_lifetimes.h"

namespace softwire {
namespace compiler {
namespace {

constexpr int64_t kRegionAlignment = 64;

int64_t Align(int64_t offset) {
  return (offset + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment;
}

int64_t RegionBytes(const proto::RegisterDef& reg) {
  return reg.slots() * reg.bytes_per_slot();
}

// Offsets of one device's registers (parallel to `registers`), and the bytes they span.
struct Layout {
  std::vector<int64_t> offsets;
  int64_t bytes = 0;
};

// First fit in `order`: each register at the lowest aligned offset clear of every register
// placed before it that it may be live with. `conflicts[i][j]`: i and j may be live together.
Layout PackInOrder(const std::vector<int64_t>& sizes,
                   const std::vector<std::vector<bool>>& conflicts,
                   const std::vector<size_t>& order) {
  Layout layout;
  layout.offsets.assign(sizes.size(), -1);
  std::vector<size_t> placed;
  for (size_t i : order) {
    std::vector<std::pair<int64_t, int64_t>> taken;  // [begin, end) of conflicting placed ones.
    for (size_t j : placed) {
      if (conflicts[i][j]) taken.emplace_back(layout.offsets[j], layout.offsets[j] + sizes[j]);
    }
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : taken) {
      if (end <= offset) continue;
      if (begin >= offset + sizes[i]) break;
      offset = Align(end);
    }
    layout.offsets[i] = offset;
    layout.bytes = std::max(layout.bytes, Align(offset + sizes[i]));
    placed.push_back(i);
  }
  return layout;
}

std::vector<size_t> SortedOrder(size_t count, const std::function<bool(size_t, size_t)>& before) {
  std::vector<size_t> order(count);
  for (size_t i = 0; i < count; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), before);
  return order;
}

// Pairs (input, output) of one device's registers whose output is written in place over the
// input (docs/PROTOCOL.md, "In-place ops"): an element-wise compute actor, the input's last
// reader, writes its output into the input's slot. Each register is in at most one pair, in plan
// order; the pair is then laid out as one region.
std::vector<std::pair<int64_t, int64_t>> InPlacePairs(const plan::RegisterLifetimes& lifetimes,
                                                      const std::vector<int64_t>& ids,
                                                      const proto::Plan& plan) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  std::vector<bool> paired(static_cast<size_t>(plan.register_def_size()), false);
  std::vector<bool> on_device(static_cast<size_t>(plan.register_def_size()), false);
  for (int64_t id : ids) on_device[static_cast<size_t>(id)] = true;
  for (int64_t output : ids) {
    const proto::RegisterDef& y = plan.register_def(static_cast<int>(output));
    const proto::ActorDef& writer = plan.actor(static_cast<int>(y.producer()));
    if (paired[static_cast<size_t>(output)]) continue;
    for (int64_t input : writer.input_register()) {
      const proto::RegisterDef& x = plan.register_def(static_cast<int>(input));
      if (!on_device[static_cast<size_t>(input)] || paired[static_cast<size_t>(input)] ||
          x.slots() != y.slots() || x.bytes_per_slot() != y.bytes_per_slot() ||
          !plan::KernelMayWriteOver(plan, writer, input, output) ||
          !lifetimes.WritesInPlace(input, output)) {
        continue;
      }
      paired[static_cast<size_t>(input)] = paired[static_cast<size_t>(output)] = true;
      pairs.emplace_back(input, output);
      break;
    }
  }
  return pairs;
}

// Lays out one device's registers; returns the bytes they span, or -1 to keep the plan's layout.
// Units are single registers or in-place pairs, each placed as one region.
int64_t ShareDevice(const plan::RegisterLifetimes& lifetimes, const std::vector<int64_t>& ids,
                    bool in_place, proto::Plan* plan) {
  std::vector<std::vector<int64_t>> units;
  {
    std::vector<bool> grouped(static_cast<size_t>(plan->register_def_size()), false);
    if (in_place) {
      for (const auto& [input, output] : InPlacePairs(lifetimes, ids, *plan)) {
        units.push_back({input, output});
        grouped[static_cast<size_t>(input)] = grouped[static_cast<size_t>(output)] = true;
      }
    }
    for (int64_t id : ids) {
      if (!grouped[static_cast<size_t>(id)]) units.push_back({id});
    }
    // Plan order first (by each unit's first register): on a tie the layout stays plan_memory's.
    std::stable_sort(units.begin(), units.end(),
                     [](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
                       return a.front() < b.front();
                     });
  }
  const size_t count = units.size();
  std::vector<int64_t> sizes(count);
  std::vector<int64_t> first_write(count);
  for (size_t i = 0; i < count; ++i) {
    sizes[i] = RegionBytes(plan->register_def(static_cast<int>(units[i].front())));
    first_write[i] = lifetimes.FirstWriteRank(units[i].front());
    for (int64_t id : units[i]) {
      first_write[i] = std::min(first_write[i], lifetimes.FirstWriteRank(id));
    }
  }
  std::vector<std::vector<bool>> conflicts(count, std::vector<bool>(count, true));
  for (size_t i = 0; i < count; ++i) {
    for (size_t j = i + 1; j < count; ++j) {
      bool apart = true;
      for (int64_t a : units[i]) {
        for (int64_t b : units[j]) apart = apart && lifetimes.NeverLiveTogether(a, b);
      }
      conflicts[i][j] = conflicts[j][i] = !apart;
    }
  }
  const std::vector<std::vector<size_t>> orders = {
      SortedOrder(count, [](size_t, size_t) { return false; }),
      SortedOrder(count, [&](size_t a, size_t b) { return sizes[a] > sizes[b]; }),
      SortedOrder(count, [&](size_t a, size_t b) { return first_write[a] < first_write[b]; }),
  };
  Layout best;
  best.bytes = -1;
  for (const std::vector<size_t>& order : orders) {
    Layout layout = PackInOrder(sizes, conflicts, order);
    if (best.bytes < 0 || layout.bytes < best.bytes) best = std::move(layout);
  }
  for (size_t i = 0; i < count; ++i) {
    for (int64_t id : units[i]) {
      proto::RegisterDef* reg = plan->mutable_register_def(static_cast<int>(id));
      reg->set_offset(best.offsets[i]);
      reg->clear_shares_bytes_with();
    }
  }
  for (const int64_t a : ids) {
    const proto::RegisterDef& first = plan->register_def(static_cast<int>(a));
    for (const int64_t b : ids) {
      const proto::RegisterDef& second = plan->register_def(static_cast<int>(b));
      const bool overlap = a != b && first.offset() < second.offset() + RegionBytes(second) &&
                           second.offset() < first.offset() + RegionBytes(first);
      if (overlap) plan->mutable_register_def(static_cast<int>(a))->add_shares_bytes_with(b);
    }
  }
  return best.bytes;
}

// Moves the device's workspaces and actor state down by what the registers gave back.
void MoveDeviceTail(int device_id, int64_t register_bytes, Compilation& compilation) {
  proto::PlanDevice* device = compilation.plan->mutable_device(device_id);
  const int64_t saved = device->register_bytes() - register_bytes;
  for (proto::ActorDef& actor : *compilation.plan->mutable_actor()) {
    if (actor.device() != device_id) continue;
    actor.set_workspace_offset(actor.workspace_offset() - saved);
    actor.set_state_offset(actor.state_offset() - saved);
  }
  device->set_register_bytes(register_bytes);
  device->set_planned_bytes(device->planned_bytes() - saved);
  DeviceMemoryPlan& memory = compilation.device_memory.at(device_id);
  memory.register_bytes = device->register_bytes();
  memory.planned_bytes = device->planned_bytes();
}

}  // namespace

Status ShareMemoryPass(Compilation& compilation) {
  if (!compilation.options().share_memory) return Status::Ok();
  proto::Plan& plan = *compilation.plan;
  const plan::RegisterLifetimes lifetimes(plan);
  if (!lifetimes.analyzed()) return Status::Ok();  // Nothing is proven: nothing shares.
  compilation.MarkPlanChanged();
  std::vector<std::vector<int64_t>> registers(plan.device_size());
  for (const proto::RegisterDef& reg : plan.register_def())
    registers[reg.device()].push_back(reg.id());
  for (const proto::PlanDevice& device : plan.device()) {
    const int64_t bytes =
        ShareDevice(lifetimes, registers[device.id()], compilation.options().in_place, &plan);
    if (bytes > device.register_bytes()) {
      return InternalError("share_memory: device " + std::to_string(device.id()) +
                           "'s registers grew from " + std::to_string(device.register_bytes()) +
                           " to " + std::to_string(bytes) + " bytes");
    }
    MoveDeviceTail(device.id(), bytes, compilation);
  }
  return Status::Ok();
}

}  // namespace compiler
}  // namespace softwire
