// Invariant 5 of docs/PROTOCOL.md: every register slot, workspace and actor state has its own
// bytes in its device's arena, except registers that declare they share bytes
// (RegisterDef.shares_bytes_with) and are proven never live together, or one written in place
// over the other by its last reader; the arena of planned_bytes holds them all.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "plan/labels.h"
#include "plan/plan_invariants.h"
#include "plan/register_lifetimes.h"
#include "proto/tensor_desc.h"

namespace softwire {
namespace plan {
namespace {

// What owns a region of an arena.
enum class RegionKind : int8_t { kSlots, kWorkspace, kState };

// One byte range [begin, end) of a device arena and what owns it: a register's slots, or an
// actor's workspace or state. Only ids: the owner's label is built for a failure's message
// alone (plans have millions of registers and actors).
struct ArenaRegion {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t owner = -1;  // A register id for kSlots, an actor id otherwise.
  RegionKind kind = RegionKind::kSlots;
};

// "register 'x' (0) slots", "actor 'fc1' (3) workspace", "actor 'fc1' (3) state".
std::string OwnerText(const proto::Plan& plan, int64_t owner, RegionKind kind) {
  switch (kind) {
    case RegionKind::kSlots:
      return RegisterLabel(plan.register_def(static_cast<int>(owner))) + " slots";
    case RegionKind::kWorkspace:
      return ActorLabel(plan.actor(static_cast<int>(owner))) + " workspace";
    case RegionKind::kState:
      return ActorLabel(plan.actor(static_cast<int>(owner))) + " state";
  }
  return "";
}

std::string OwnerText(const proto::Plan& plan, const ArenaRegion& region) {
  return OwnerText(plan, region.owner, region.kind);
}

bool Declared(const proto::RegisterDef& reg, int64_t other) {
  return std::find(reg.shares_bytes_with().begin(), reg.shares_bytes_with().end(), other) !=
         reg.shares_bytes_with().end();
}

// Overlapping regions are allowed only between two registers that list each other.
bool MayOverlap(const proto::Plan& plan, const ArenaRegion& a, const ArenaRegion& b) {
  if (a.kind != RegionKind::kSlots || b.kind != RegionKind::kSlots) return false;
  return Declared(plan.register_def(static_cast<int>(a.owner)), b.owner) &&
         Declared(plan.register_def(static_cast<int>(b.owner)), a.owner);
}

std::string RangeText(const ArenaRegion& region) {
  return "[" + std::to_string(region.begin) + ", " + std::to_string(region.end) + ")";
}

StatusOr<int64_t> TensorBytes(const proto::RegisterDef& r) {
  int64_t elements = 1;
  for (int64_t dim : r.tensor().dims()) {
    if (dim < 0) return InvalidArgumentError(RegisterLabel(r) + ": tensor has a negative extent");
    elements *= dim;
  }
  const int64_t element_bytes = SizeOf(DTypeOf(r.tensor()));
  if (element_bytes == 0) return InvalidArgumentError(RegisterLabel(r) + ": tensor has no dtype");
  return elements * element_bytes;
}

Status CheckRegisterSlots(const proto::RegisterDef& r) {
  if (r.slots() < 1) {
    return InvalidArgumentError(RegisterLabel(r) + ": slots is " + std::to_string(r.slots()) +
                                ", must be >= 1");
  }
  SOFTWIRE_ASSIGN_OR_RETURN(int64_t bytes, TensorBytes(r));
  if (r.bytes_per_slot() < bytes) {
    return InvalidArgumentError(RegisterLabel(r) + ": bytes_per_slot " +
                                std::to_string(r.bytes_per_slot()) + " is less than the " +
                                std::to_string(bytes) + " bytes of its tensor");
  }
  if (r.offset() < 0) return InvalidArgumentError(RegisterLabel(r) + ": negative offset");
  return Status::Ok();
}

// Adds [offset, offset + bytes) to its device's list; empty ranges take no memory.
Status AddRegion(const proto::Plan& plan, int64_t owner, RegionKind kind, int64_t offset,
                 int64_t bytes, std::vector<ArenaRegion>* regions) {
  if (bytes < 0 || offset < 0) {
    return InvalidArgumentError(OwnerText(plan, owner, kind) + ": negative offset or size");
  }
  if (bytes > 0) regions->push_back(ArenaRegion{offset, offset + bytes, owner, kind});
  return Status::Ok();
}

Status CheckDeviceArena(const proto::Plan& plan, const proto::PlanDevice& device,
                        std::vector<ArenaRegion> regions) {
  std::stable_sort(regions.begin(), regions.end(),
                   [](const ArenaRegion& a, const ArenaRegion& b) { return a.begin < b.begin; });
  for (size_t i = 0; i < regions.size(); ++i) {
    for (size_t j = i + 1; j < regions.size() && regions[j].begin < regions[i].end; ++j) {
      if (MayOverlap(plan, regions[i], regions[j])) continue;
      return InvalidArgumentError(DeviceLabel(device) + ": " + OwnerText(plan, regions[i]) + " " +
                                  RangeText(regions[i]) + " overlaps " +
                                  OwnerText(plan, regions[j]) + " " + RangeText(regions[j]));
    }
    if (regions[i].end > device.planned_bytes()) {
      return InvalidArgumentError(DeviceLabel(device) + ": " + OwnerText(plan, regions[i]) + " " +
                                  RangeText(regions[i]) + " ends beyond planned_bytes " +
                                  std::to_string(device.planned_bytes()));
    }
  }
  return Status::Ok();
}

// `output` is written in place over `input` (docs/PROTOCOL.md, "In-place ops"): laid out
// identically, its producer's kernel may write over `input`, and lifetimes allow it.
bool WrittenInPlace(const proto::Plan& plan, const RegisterLifetimes& lifetimes, int64_t input,
                    int64_t output) {
  const proto::RegisterDef& x = plan.register_def(static_cast<int>(input));
  const proto::RegisterDef& y = plan.register_def(static_cast<int>(output));
  return x.offset() == y.offset() && x.slots() == y.slots() &&
         x.bytes_per_slot() == y.bytes_per_slot() &&
         KernelMayWriteOver(plan, plan.actor(static_cast<int>(y.producer())), input, output) &&
         lifetimes.WritesInPlace(input, output);
}

// Every declared pair: two distinct registers of one device, listed both ways, that the
// protocol's dependencies keep from ever being live together, or one written in place over the
// other.
Status CheckSharedBytes(const proto::Plan& plan) {
  std::unique_ptr<RegisterLifetimes> lifetimes;
  for (const proto::RegisterDef& r : plan.register_def()) {
    for (int64_t other_id : r.shares_bytes_with()) {
      auto pair = [&] {
        return RegisterLabel(r) + " shares bytes with register " + std::to_string(other_id);
      };
      if (other_id < 0 || other_id >= plan.register_def_size() || other_id == r.id()) {
        return InvalidArgumentError(pair() + ", which is not another register of the plan");
      }
      const proto::RegisterDef& other = plan.register_def(static_cast<int>(other_id));
      if (other.device() != r.device()) {
        return InvalidArgumentError(pair() + " on another device");
      }
      if (!Declared(other, r.id())) {
        return InvalidArgumentError(pair() + ", which does not list it back");
      }
      if (!lifetimes) lifetimes = std::make_unique<RegisterLifetimes>(plan);
      if (!lifetimes->analyzed()) {
        return InvalidArgumentError(pair() +
                                    ", but lifetimes cannot be proven: " + lifetimes->why());
      }
      if (!lifetimes->NeverLiveTogether(r.id(), other_id) &&
          !WrittenInPlace(plan, *lifetimes, r.id(), other_id) &&
          !WrittenInPlace(plan, *lifetimes, other_id, r.id())) {
        return InvalidArgumentError(pair() + " (" + RegisterLabel(other) +
                                    "), but both can be live at once under some firing order");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckArenaLayout(const proto::Plan& plan) {
  std::vector<std::vector<ArenaRegion>> regions(plan.device_size());
  for (const proto::RegisterDef& r : plan.register_def()) {
    SOFTWIRE_RETURN_IF_ERROR(CheckRegisterSlots(r));
    SOFTWIRE_RETURN_IF_ERROR(AddRegion(plan, r.id(), RegionKind::kSlots, r.offset(),
                                       r.slots() * r.bytes_per_slot(), &regions[r.device()]));
  }
  for (const proto::ActorDef& a : plan.actor()) {
    SOFTWIRE_RETURN_IF_ERROR(AddRegion(plan, a.id(), RegionKind::kWorkspace, a.workspace_offset(),
                                       a.workspace_bytes(), &regions[a.device()]));
    SOFTWIRE_RETURN_IF_ERROR(AddRegion(plan, a.id(), RegionKind::kState, a.state_offset(),
                                       a.state_bytes(), &regions[a.device()]));
  }
  for (const proto::PlanDevice& device : plan.device()) {
    SOFTWIRE_RETURN_IF_ERROR(CheckDeviceArena(plan, device, std::move(regions[device.id()])));
  }
  return CheckSharedBytes(plan);
}

}  // namespace plan
}  // namespace softwire
