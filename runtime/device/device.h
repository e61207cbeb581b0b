// Device: one device a node hosts, behind the one interface every kind implements: its memory
// (arenas, copies to and from host memory), its queues, its kernels, and the per-device part of
// every kernel context. The runtime above it (bindings, actors, the node runtime) sees only this
// interface; device_factory.h is the one table that maps a kind to its implementation.
//
// Kinds (one folder each):
//   - cpu/ (CpuDevice): two strands, one for the compute queue (index 0) and one that every
//     copy queue (index >= 1) maps onto, and kernel threads of its own, named "sw:cpu0/k1"
//     (plan::DeviceThreadName; thread 0 is the CAF worker that holds the compute strand). The
//     compute strand's kernels spread loops over the kernel threads; the copy strand's run on
//     the worker that holds it, one thread, so a copy, a send or a recv goes on while a kernel
//     runs (as on an accelerator's copy engine) without taking the kernels' cores
//     (docs/DECISIONS.md 37). A copy actor reads its source register in another device's arena
//     directly (one address space).
//   - sim/ (SimDevice): one queue per queue index, timed by the runtime's SimClock: a launch
//     takes ActorDef.estimated_seconds of real time and computes nothing, so copies (queue 1)
//     overlap compute (queue 0) as on a real accelerator. Its arenas hold no memory.
//   - cuda/ (CudaDevice): built only where the CUDA toolkit is found (device_factory.cc): one
//     cudaMalloc per hosted plan, a stream per queue index, launches completed through CUDA
//     events by a completion thread per queue; nothing above this interface changes.
//
// A device outlives every plan hosted on it: its queues serve the launches of any hosted plan,
// each launch naming where its completion goes (device_queue.h). The memory of one hosted plan
// is an arena the plan asks the device for (AllocateArena) and owns.
//
// Threading: created and destroyed on one thread; every const method is then thread-safe.
#ifndef SOFTWIRE_RUNTIME_DEVICE_DEVICE_H_
#define SOFTWIRE_RUNTIME_DEVICE_DEVICE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "proto/plan.pb.h"
#include "runtime/device/device_arena.h"
#include "runtime/device/device_queue.h"
#include "runtime/kernels/kernel.h"

namespace softwire {
namespace runtime {

struct DeviceOptions {
  // Threads the kernels of a cpu device use (its ParallelRunner). <= 0: PlanDevice.cores, or 1
  // when the plan gives none.
  int kernel_threads = 0;
  // How long an idle kernel thread spins before it parks.
  std::chrono::microseconds spin = std::chrono::microseconds(50);
  // When not empty, kernel thread t of a cpu device runs only on core cores[t % size] (thread
  // 0 is the CAF worker holding the strand: the runtime pins those, caf_thread_names.h).
  std::vector<int> cores;
  // cuda devices: let cuBLAS run float32 products on TF32 tensor cores (10-bit mantissas: ~8x
  // the rate on an H100/H200, and results that differ from the cpu kernels' beyond their
  // tolerances). Off by default, so products are float32 as on the cpu (docs/CUDA.md).
  bool cuda_allow_tf32 = false;
  // cuda devices: a consumer on the producer's stream launches right after the producer
  // launched, and a reader whose slot's next writers share its stream releases at its launch
  // (docs/PROTOCOL.md, "Stream-ordered edges"). Off: every Ready and Release waits for the
  // firing's completion, to compare.
  bool cuda_stream_ordered_edges = true;
};

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // "node0/cpu:0".
  const std::string& name() const { return name_; }
  proto::DeviceKind kind() const { return kind_; }

  // Memory. An arena of exactly `bytes` for one hosted plan (device_arena.h: an arena of a
  // device without memory of its own holds none). ResourceExhausted names the device.
  virtual StatusOr<std::unique_ptr<DeviceArena>> AllocateArena(int64_t bytes) const = 0;
  // Copies `bytes` between memory of this device and host memory. Unimplemented on a device
  // whose arenas hold no memory.
  virtual Status CopyToHost(const char* device_source, void* host_destination,
                            int64_t bytes) const = 0;
  virtual Status CopyFromHost(const void* host_source, char* device_destination,
                              int64_t bytes) const = 0;

  // Queues. The queue that runs the plan's queue `index`; InvalidArgument when the device has
  // no such queue (a cpu device maps index 0 onto its compute strand and every index >= 1 onto
  // its copy strand).
  virtual StatusOr<DeviceQueue*> queue(int index) const = 0;

  // Completes now, with Cancelled and reported to their listeners, the launches of a stopped
  // run (stop flag `stopping`) that this device's queues hold but have not begun; a queue that
  // runs them soon anyway (a cpu strand cancels them as its holder releases it) need not.
  virtual void CancelLaunches(const std::atomic<bool>* stopping) {}

  // Kernels. The kernel of setup.actor, from this device's kernel registry; errors name the
  // actor.
  virtual StatusOr<std::unique_ptr<Kernel>> CreateKernel(const KernelSetup& setup) const = 0;
  // The per-device part of the context of a kernel launched on queue `queue`: the device and
  // the runner its loops spread over; the binding adds views, workspace and state.
  virtual KernelContext NewKernelContext(int queue) const = 0;

  // Threads. Kernel threads of the device (1 where kernels run on the queue's thread), and the
  // cores kernel thread t runs on (cores()[t]); empty when not pinned.
  virtual int kernel_threads() const = 0;
  virtual const std::vector<int>& cores() const = 0;

 protected:
  Device(std::string name, proto::DeviceKind kind) : name_(std::move(name)), kind_(kind) {}

 private:
  const std::string name_;
  const proto::DeviceKind kind_;
};

// Kernel threads of a cpu device under `options`: kernel_threads, or the plan's cores, at least 1.
int KernelThreads(const proto::PlanDevice& plan_device, const DeviceOptions& options);

}  // namespace runtime
}  // namespace softwire

#endif  // SOFTWIRE_RUNTIME_DEVICE_DEVICE_H_
