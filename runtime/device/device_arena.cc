#include "runtime/device/device_arena.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace softwire {
namespace runtime {
namespace {

// Physical memory of this machine; 0 when unknown.
int64_t PhysicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<int64_t>(pages) * page_size;
}

}  // namespace

StatusOr<std::unique_ptr<DeviceArena>> DeviceArena::Allocate(const std::string& device_name,
                                                             int64_t bytes) {
  if (bytes < 0) {
    return InvalidArgumentError("device '" + device_name + "': planned bytes " +
                                std::to_string(bytes) + " is negative");
  }
  // Linux overcommits: a huge posix_memalign succeeds and the zero-fill below would then be
  // killed by the OOM killer. Refuse what the machine cannot hold at all instead.
  const int64_t physical = PhysicalMemoryBytes();
  if (physical > 0 && bytes > physical) {
    return ResourceExhaustedError("device '" + device_name + "': the plan needs an arena of " +
                                  std::to_string(bytes) + " bytes, more than this machine's " +
                                  std::to_string(physical) + " bytes of memory");
  }
  char* base = nullptr;
  if (bytes > 0) {
    void* memory = nullptr;
    // posix_memalign, not aligned_alloc: the size need not be a multiple of the alignment, so
    // the arena is exactly the planned size.
    if (posix_memalign(&memory, kAlignment, static_cast<size_t>(bytes)) != 0) {
      return ResourceExhaustedError("device '" + device_name + "': cannot allocate its arena of " +
                                    std::to_string(bytes) + " bytes");
    }
    base = static_cast<char*>(memory);
    std::memset(base, 0, static_cast<size_t>(bytes));
  }
  return std::unique_ptr<DeviceArena>(new DeviceArena(device_name, base, bytes, true));
}

StatusOr<std::unique_ptr<DeviceArena>> DeviceArena::Reserve(const std::string& device_name,
                                                            int64_t bytes) {
  if (bytes < 0) {
    return InvalidArgumentError("device '" + device_name + "': planned bytes " +
                                std::to_string(bytes) + " is negative");
  }
  return std::unique_ptr<DeviceArena>(new DeviceArena(device_name, nullptr, bytes, false));
}

DeviceArena::DeviceArena(std::string device_name, char* base, int64_t bytes, bool holds_memory)
    : device_name_(std::move(device_name)),
      base_(base),
      bytes_(bytes),
      holds_memory_(holds_memory) {}

std::unique_ptr<DeviceArena> DeviceArena::Adopt(const std::string& device_name, char* base,
                                                int64_t bytes, std::function<void(char*)> release) {
  std::unique_ptr<DeviceArena> arena(new DeviceArena(device_name, base, bytes, true));
  arena->release_ = std::move(release);
  return arena;
}

DeviceArena::~DeviceArena() {
  if (release_) {
    release_(base_);
  } else {
    std::free(base_);
  }
}

StatusOr<char*> DeviceArena::Region(int64_t offset, int64_t bytes, const std::string& what) const {
  if (offset < 0 || bytes < 0 || offset > bytes_ || bytes > bytes_ - offset) {
    return InvalidArgumentError(what + ": bytes [" + std::to_string(offset) + ", " +
                                std::to_string(offset + bytes) + ") lie outside the " +
                                std::to_string(bytes_) + "-byte arena of device '" + device_name_ +
                                "'");
  }
  return holds_memory_ ? base_ + offset : nullptr;
}

}  // namespace runtime
}  // namespace softwire
