// Device: one device of the plan as the runtime hosts it: its arena, its queues and, for cpu
// devices, the thread pool its kernels spread loops over.
//
// Kinds today: `cpu`. A cpu device has one strand (strand_queue.h) that every queue index of
// the plan maps onto: copies on a CPU compete for the same cores and memory bandwidth as
// compute, so running them beside it would only oversubscribe the device. `sim` and `cuda`
// devices come later; they add DeviceQueue implementations whose launches complete
// asynchronously, and nothing above this interface changes.
//
// Threading: created and destroyed on the job's thread; queue() and runner() are then used
// by the actors from any thread.
#ifndef SOFTWIRE_RUNTIME_HOST_DEVICE_H_
#define SOFTWIRE_RUNTIME_HOST_DEVICE_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "base/status.h"
#include "proto/plan.pb.h"
#include "runtime/host/device_arena.h"
#include "runtime/host/device_queue.h"
#include "runtime/kernels/parallel_runner.h"

namespace softwire {
namespace runtime {

struct DeviceOptions {
  // Threads the kernels of a cpu device use (its ParallelRunner). <= 0: PlanDevice.cores, or 1
  // when the plan gives none.
  int kernel_threads = 0;
  // How long an idle kernel thread spins before it parks.
  std::chrono::microseconds spin = std::chrono::microseconds(50);
};

class Device {
 public:
  // Allocates the arena (exactly plan_device.planned_bytes) and starts the kernel threads.
  // Unimplemented for device kinds this build cannot host. `listener` and `stopping` are
  // borrowed and must outlive the device.
  static StatusOr<std::unique_ptr<Device>> Create(const proto::PlanDevice& plan_device,
                                                  const DeviceOptions& options,
                                                  LaunchListener* listener,
                                                  const std::atomic<bool>* stopping);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // "node0/cpu:0".
  const std::string& name() const { return name_; }
  proto::DeviceKind kind() const { return kind_; }
  const DeviceArena& arena() const { return *arena_; }
  // The queue that runs the plan's queue `index` (any index >= 0).
  DeviceQueue* queue(int index) const;
  ParallelRunner* runner() const { return runner_.get(); }
  int kernel_threads() const { return runner_->threads(); }

 private:
  Device(std::string name, proto::DeviceKind kind);

  std::string name_;
  proto::DeviceKind kind_;
  std::unique_ptr<DeviceArena> arena_;
  std::unique_ptr<ParallelRunner> runner_;
  std::unique_ptr<DeviceQueue> strand_;
};

// "node0/cpu:0" for a plan device.
std::string DeviceDisplayName(const proto::PlanDevice& plan_device);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_DEVICE_H_
