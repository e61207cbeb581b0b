// MemoryTracker: register bytes in use per device while a plan is simulated, and their
// high-water mark.
//
// A register's slots are in use from the launch of the firing that begins a fill until every
// consumer released it (ActorProtocol::occupied_slots). The engine tells the tracker a
// register's occupancy after every protocol call that may have changed it (a launch begins
// fills; a Release, or a completion writing a register nobody reads, frees one); the tracker
// keeps the device totals. Set takes absolute values, so a call that freed a slot and began the
// next fill in one go never shows as a spike.
//
// Not thread-safe.
#ifndef SOFTWIRE_SIMULATOR_MEMORY_TRACKER_H_
#define SOFTWIRE_SIMULATOR_MEMORY_TRACKER_H_

#include <cstdint>
#include <vector>

#include "proto/plan.pb.h"
#include "simulator/simulation_result.h"

namespace softwire {
namespace simulator {

class MemoryTracker {
 public:
  explicit MemoryTracker(const proto::Plan& plan);

  // Register `register_id` now has `occupied` slots in use.
  void Set(int64_t register_id, int occupied) {
    RegisterState& state = registers_[static_cast<size_t>(register_id)];
    const int delta = occupied - state.occupied;
    if (delta == 0) return;
    state.occupied = occupied;
    DeviceState& device = devices_[static_cast<size_t>(state.device)];
    device.current += delta * state.bytes_per_slot;
    if (device.current > device.high_water) device.high_water = device.current;
  }

  // One entry per plan device.
  std::vector<DeviceMemory> Finish() const;

 private:
  struct RegisterState {
    int64_t bytes_per_slot = 0;
    int32_t device = 0;
    int occupied = 0;
  };
  struct DeviceState {
    int64_t current = 0;
    int64_t high_water = 0;
  };

  std::vector<RegisterState> registers_;
  std::vector<DeviceState> devices_;
  std::vector<DeviceMemory> plan_figures_;  // Everything but the high-water marks.
};

}  // namespace simulator
}  // namespace softwire

#endif  // SOFTWIRE_SIMULATOR_MEMORY_TRACKER_H_
