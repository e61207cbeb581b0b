#include "simulator/memory_tracker.h"

namespace softwire {
namespace simulator {

MemoryTracker::MemoryTracker(const proto::Plan& plan)
    : registers_(static_cast<size_t>(plan.register_def_size())),
      devices_(static_cast<size_t>(plan.device_size())),
      plan_figures_(static_cast<size_t>(plan.device_size())) {
  for (const proto::RegisterDef& register_def : plan.register_def()) {
    RegisterState& state = registers_[static_cast<size_t>(register_def.id())];
    state.bytes_per_slot = register_def.bytes_per_slot();
    state.device = register_def.device();
  }
  for (const proto::PlanDevice& device : plan.device()) {
    DeviceMemory& figures = plan_figures_[static_cast<size_t>(device.id())];
    figures.device = device.id();
    figures.planned_bytes = device.planned_bytes();
    figures.planned_register_bytes = device.register_bytes();
  }
  for (const proto::ActorDef& actor : plan.actor()) {
    plan_figures_[static_cast<size_t>(actor.device())].fixed_bytes +=
        actor.workspace_bytes() + actor.state_bytes();
  }
}

std::vector<DeviceMemory> MemoryTracker::Finish() const {
  std::vector<DeviceMemory> memory = plan_figures_;
  for (size_t d = 0; d < memory.size(); ++d) {
    memory[d].register_high_water = devices_[d].high_water;
  }
  return memory;
}

}  // namespace simulator
}  // namespace softwire
