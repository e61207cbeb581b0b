// DeviceArena: the one block of memory a device gets for a whole job.
//
// The compiler plans every byte a device needs (register slots, kernel workspaces, actor state)
// as offsets into one arena of PlanDevice.planned_bytes; the runtime allocates exactly that,
// once, when it loads the plan, and nothing else per piece (docs/PROTOCOL.md, "Memory").
//
//   StatusOr<std::unique_ptr<DeviceArena>> arena = DeviceArena::Allocate("node0/cpu:0", bytes);
//   StatusOr<void*> slot = (*arena)->Region(offset, bytes, "register 'x'");
//
// Threading: Allocate and Region are called while the job is set up, on one thread; the memory
// itself is then read and written by kernels under the register/slot protocol.
// Ownership: the arena owns its memory; Region pointers are borrowed and die with the arena.
#ifndef SOFTWIRE_RUNTIME_DEVICE_DEVICE_ARENA_H_
#define SOFTWIRE_RUNTIME_DEVICE_DEVICE_ARENA_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace softwire {
namespace runtime {

class DeviceArena {
 public:
  // Start address alignment. A page: more than any kernel or vector unit asks for, and the
  // planner's offsets are relative to it.
  static constexpr int64_t kAlignment = 4096;

  // Allocates exactly `bytes` (zero-filled, so a run is deterministic even if a kernel reads a
  // slot before its first fill). ResourceExhausted names the device when `bytes` exceeds the
  // machine's physical memory or the allocation fails.
  static StatusOr<std::unique_ptr<DeviceArena>> Allocate(const std::string& device_name,
                                                         int64_t bytes);
  // An arena of `bytes` planned bytes that holds no memory: the arena of a `sim` device, whose
  // kernels never touch data (sim devices model e.g. 16 GiB each; allocating that, even
  // lazily, would be pointless). Region checks ranges exactly as for a real arena and returns
  // null; allocated_bytes() is 0.
  static StatusOr<std::unique_ptr<DeviceArena>> Reserve(const std::string& device_name,
                                                        int64_t bytes);
  // An arena over `bytes` of device memory the caller allocated at `base` (a cuda device's one
  // cudaMalloc, zero-filled by it), handed back through `release` when the arena dies. Region
  // pointers are then device addresses: only kernels of that device and its copies touch them.
  static std::unique_ptr<DeviceArena> Adopt(const std::string& device_name, char* base,
                                            int64_t bytes, std::function<void(char*)> release);
  ~DeviceArena();
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // The address of [offset, offset + bytes). InvalidArgument naming `what` and the device when
  // the range is not inside the arena (a plan whose offsets do not fit its planned bytes).
  // Null, after the same check, in an arena that holds no memory.
  StatusOr<char*> Region(int64_t offset, int64_t bytes, const std::string& what) const;

  // Bytes allocated: the planned figure given to Allocate; 0 for a reserved arena.
  int64_t allocated_bytes() const { return holds_memory_ ? bytes_ : 0; }
  // Bytes the plan gives the device.
  int64_t planned_bytes() const { return bytes_; }
  bool holds_memory() const { return holds_memory_; }
  char* base() const { return base_; }

 private:
  DeviceArena(std::string device_name, char* base, int64_t bytes, bool holds_memory);

  std::string device_name_;
  char* base_;
  int64_t bytes_;
  bool holds_memory_;
  std::function<void(char*)> release_;  // Empty: base_ came from posix_memalign.
};

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_DEVICE_ARENA_H_
