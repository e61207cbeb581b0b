// Device: one device of the plan as the runtime hosts it: its arena, its queues and, for cpu
// devices, the thread pool its kernels spread loops over.
//
// A cpu device's kernel threads are named for it: "sw:cpu0/k1" is thread 1 of node0's cpu:0
// (DeviceThreadName; thread 0 is the CAF worker that holds the device's strand).
//
// Kinds:
//   - `cpu`: one strand (strand_queue.h) that every queue index of the plan maps onto: copies
//     on a CPU compete for the same cores and memory bandwidth as compute, so running them
//     beside it would only oversubscribe the device. Several cpu devices of one process each
//     have their own arena, strand and kernel threads; a copy actor reads its source register
//     in another device's arena directly (one address space).
//   - `sim`: one queue per queue index of the plan, all timed by the job's SimClock
//     (sim_clock.h): a launch takes ActorDef.estimated_seconds of real time and computes
//     nothing, so copies (queue 1) overlap compute (queue 0) as on a real accelerator. Its
//     arena is reserved, not allocated (device_arena.h); its kernels are sim_kernels.h's.
//   - `cuda`: later; it adds a DeviceQueue whose launches complete asynchronously, and nothing
//     above this interface changes.
//
// Threading: created and destroyed on the job's thread; queue() and runner() are then used
// by the actors from any thread.
#ifndef SOFTWIRE_RUNTIME_HOST_DEVICE_H_
#define SOFTWIRE_RUNTIME_HOST_DEVICE_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/plan.pb.h"
#include "runtime/host/device_arena.h"
#include "runtime/host/device_queue.h"
#include "runtime/host/sim_clock.h"
#include "runtime/kernels/parallel_runner.h"

namespace softwire {
namespace runtime {

struct DeviceOptions {
  // Threads the kernels of a cpu device use (its ParallelRunner). <= 0: PlanDevice.cores, or 1
  // when the plan gives none.
  int kernel_threads = 0;
  // How long an idle kernel thread spins before it parks.
  std::chrono::microseconds spin = std::chrono::microseconds(50);
  // When not empty, kernel thread t of a cpu device runs only on core cores[t % size] (thread
  // 0 is the CAF worker holding the strand: the job pins those, caf_thread_names.h).
  std::vector<int> cores;
};

class Device {
 public:
  // Creates the device with queues 0 .. queues - 1: allocates the arena (exactly
  // plan_device.planned_bytes; reserved only for sim devices) and starts the kernel threads.
  // Unimplemented for device kinds this build cannot host; a sim device needs `sim_clock`.
  // `listener`, `stopping` and `sim_clock` are borrowed and must outlive the device.
  static StatusOr<std::unique_ptr<Device>> Create(const proto::PlanDevice& plan_device, int queues,
                                                  const DeviceOptions& options,
                                                  LaunchListener* listener,
                                                  const std::atomic<bool>* stopping,
                                                  SimClock* sim_clock);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // "node0/cpu:0".
  const std::string& name() const { return name_; }
  proto::DeviceKind kind() const { return kind_; }
  const DeviceArena& arena() const { return *arena_; }
  // The queue that runs the plan's queue `index` (0 <= index < queues; any index >= 0 on a
  // cpu device, whose queues are all its strand).
  DeviceQueue* queue(int index) const;
  ParallelRunner* runner() const { return runner_.get(); }
  int kernel_threads() const { return runner_->threads(); }
  // The cores kernel thread t runs on (cores()[t]); empty when not pinned.
  const std::vector<int>& cores() const { return cores_; }

 private:
  Device(std::string name, proto::DeviceKind kind);

  std::string name_;
  proto::DeviceKind kind_;
  std::unique_ptr<DeviceArena> arena_;
  std::unique_ptr<ParallelRunner> runner_;
  std::vector<int> cores_;
  std::unique_ptr<DeviceQueue> strand_;                   // cpu.
  std::vector<std::unique_ptr<DeviceQueue>> sim_queues_;  // sim, by queue index.
};

// Kernel threads of a cpu device under `options`: kernel_threads, or the plan's cores, at least 1.
int KernelThreads(const proto::PlanDevice& plan_device, const DeviceOptions& options);

// The name of kernel thread `thread` of a device, at most 15 bytes as Linux keeps them:
// "sw:cpu0/k1" for node0 (or no node), "sw:n1cpu0/k1" for node1, the node's name otherwise.
std::string DeviceThreadName(const proto::PlanDevice& plan_device, int thread);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_HOST_DEVICE_H_
